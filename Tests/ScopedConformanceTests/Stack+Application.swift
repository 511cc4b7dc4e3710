import GRPCCore
import GRPCNIOTransportHTTP2
import Hummingbird
import Logging
import NIOCore
import Scoped
import ScopedGRPC
import ScopedHummingbird
import ScopedServiceLifecycle
import ScopedVapor
import SessionTestSupport
import ServiceLifecycle
import Testing
import Vapor

extension Stack {
    /// Runs `app` as a whole application whose root lives as the adapter's article sets it up:
    /// validated before the port binds, its running app services running, shut down after the
    /// server has stopped and finished its requests.
    ///
    /// `body` runs once the server serves; when it returns, the application shuts down
    /// gracefully. Returns once the application has stopped; throws what stopped it early (a
    /// root that fails validation), in which case `body` never ran.
    func runApplication(
        root: ScopeRoot,
        app: ConformanceApp,
        log: CloseLog,
        _ body: @Sendable (any ConformanceClient) async throws -> Void
    ) async throws {
        let logger = Self.quietLogger
        switch self {
        case .hummingbird, .openAPIOnHummingbird:
            let (serving, started) = AsyncStream.makeStream(of: Int.self)
            var application = Hummingbird.Application(
                router: try makeRouter(root: .fixed(root), app: app, log: log),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in started.yield(channel.localAddress?.port ?? 0) },
                logger: logger
            )
            application.addScopeRoot(ScopeRootService(root: root, logger: logger))
            try await Self.run(group: [application], serving: serving, started: started) { port in
                try await body(HTTPConformanceClient(port: port))
            }
        case .vapor, .openAPIOnVapor:
            let application = try await Vapor.Application.make(
                Environment(name: "testing", arguments: ["vapor", "serve"])
            )
            application.logger.logLevel = .critical
            application.http.server.configuration.hostname = "127.0.0.1"
            application.http.server.configuration.port = 0
            application.lifecycle.use(ScopeRootLifecycle(root: root, logger: logger))
            do {
                try configure(application, root: .fixed(root), app: app, log: log)
                try await application.startup()
                try await body(
                    HTTPConformanceClient(port: try #require(application.http.server.shared.localAddress?.port))
                )
            } catch {
                try? await application.asyncShutdown()
                throw error
            }
            try await application.asyncShutdown()
        case .grpc:
            let server = makeGRPCServer(root: .fixed(root), app: app, log: log)
            let (serving, started) = AsyncStream.makeStream(of: Int.self)
            let rootService = ScopeRootService(root: root, logger: logger)
            let services = rootService.services(serving: Announced(GRPCServerService(server: server), to: started))
            try await Self.run(group: services, serving: serving, started: started) { _ in
                try await withClient(of: server, body)
            }
        }
    }

    static let quietLogger: Logger = {
        var logger = Logger(label: "conformance")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs `services` in a group; once `serving` yields the server's port, runs `body` with
    /// it, then shuts the group down gracefully and waits for it to end.
    private static func run(
        group services: [any Service],
        serving: AsyncStream<Int>,
        started: AsyncStream<Int>.Continuation,
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [],
                logger: quietLogger
            )
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { started.finish() }
                try await group.run()
            }
            var ports = serving.makeAsyncIterator()
            guard let port = await ports.next() else {
                // The group ended before the server served: its error is the application's.
                try await tasks.waitForAll()
                Issue.record("the application stopped without serving and without an error")
                return
            }
            do {
                try await body(port)
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

/// A service that says when it starts running: after the root service's validation, when it
/// is the server of `ScopeRootService.services(serving:)`.
struct Announced<Wrapped: Service>: Service {
    let wrapped: Wrapped
    let started: AsyncStream<Int>.Continuation

    init(_ wrapped: Wrapped, to started: AsyncStream<Int>.Continuation) {
        self.wrapped = wrapped
        self.started = started
    }

    func run() async throws {
        started.yield(0)
        try await wrapped.run()
    }
}
