// swift-tools-version:6.2
import CompilerPluginSupport
import Foundation
import PackageDescription

/// Whether this package is the one being built (`swift run ExampleServer`, `swift test` in its
/// folder, `--package-path` to it) rather than another package's dependency.
///
/// SwiftPM evaluates every manifest of a build with the root package's folder as the current
/// directory (a dependency's with its dependent's), and caches each evaluation under the
/// environment it ran in, so the answer cannot leak from one build to the other.
let isRootPackage: Bool = {
    func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }
    return resolved(FileManager.default.currentDirectoryPath) == resolved(Context.packageDirectory)
}()

let package = Package(
    name: "Scoped",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Scoped", targets: ["Scoped"]),
        .library(name: "ScopedTesting", targets: ["ScopedTesting"]),
        .library(name: "ScopedInstrumentation", targets: ["ScopedInstrumentation"]),
        .library(name: "ScopedDiagnostics", targets: ["ScopedDiagnostics"]),
        .library(name: "ScopedReload", targets: ["ScopedReload"]),
        .library(name: "ScopedTenants", targets: ["ScopedTenants"]),
        .library(name: "ScopedDatabase", targets: ["ScopedDatabase"]),
        .library(name: "ScopedSQLite", targets: ["ScopedSQLite"]),
        .library(name: "ScopedPostgres", targets: ["ScopedPostgres"]),
        .library(name: "ScopedServiceLifecycle", targets: ["ScopedServiceLifecycle"]),
        .library(name: "ScopedHummingbird", targets: ["ScopedHummingbird"]),
        .library(name: "ScopedHummingbirdWebSocket", targets: ["ScopedHummingbirdWebSocket"]),
        .library(name: "ScopedVapor", targets: ["ScopedVapor"]),
        .library(name: "ScopedFluent", targets: ["ScopedFluent"]),
        .library(name: "ScopedOpenAPI", targets: ["ScopedOpenAPI"]),
        .library(name: "ScopedGRPC", targets: ["ScopedGRPC"]),
        .executable(name: "ExampleServer", targets: ["ExampleServer"]),
    ],
    // What a dependent package resolves and builds. A package dependency that every target
    // reaches only through a disabled trait is not even resolved, so an application that names
    // only the traits it uses fetches only their packages (README, Install).
    traits: [
        // `@Entry`, whose macro is built with swift-syntax: about 50 s of a first debug build.
        // Without it, entries are declared with a hand-written `ScopedKey`, and no swift-syntax
        // is resolved or compiled.
        .trait(name: "Macros", description: "The @Entry macro (builds swift-syntax)."),
        // Spans and metrics for service builds, closes and scopes (swift-distributed-tracing and
        // swift-metrics, both API-only), in a module of their own that a root installs.
        .trait(
            name: "Instrumentation",
            description: "ScopedInstrumentation: traces and metrics for service builds, closes and scopes."
        ),
        .trait(
            name: "ServiceLifecycle",
            description: "ScopedServiceLifecycle: a root's life as a swift-service-lifecycle Service."
        ),
        .trait(
            name: "Hummingbird",
            description: "ScopedHummingbird: a request scope per Hummingbird request, and the root's life in the app.",
            enabledTraits: ["ServiceLifecycle"]
        ),
        .trait(
            name: "HummingbirdWebSocket",
            description: "ScopedHummingbirdWebSocket: a scope per WebSocket connection and per message.",
            enabledTraits: ["Hummingbird"]
        ),
        .trait(name: "PostgreSQL", description: "ScopedPostgres: request sessions on postgres-nio."),
        .trait(
            name: "Vapor",
            description: "ScopedVapor: a request scope per Vapor 4 request, and the root's life in the app.",
            enabledTraits: ["ServiceLifecycle"]
        ),
        .trait(
            name: "Fluent",
            description: "ScopedFluent: a Fluent database whose queries in a request scope share one transaction."
        ),
        .trait(
            name: "OpenAPI",
            description: "ScopedOpenAPI: a request scope around swift-openapi-generator handlers, on any transport."
        ),
        .trait(name: "GRPC", description: "ScopedGRPC: a scope per grpc-swift 2 RPC, and per message."),
        .trait(
            name: "Example",
            description: "The example server, its tests, the benchmarks' server and the reliability suite.",
            enabledTraits: [
                "Macros", "Instrumentation", "ServiceLifecycle", "Hummingbird", "HummingbirdWebSocket",
                "PostgreSQL", "Vapor", "Fluent", "OpenAPI", "GRPC",
            ]
        ),
        // A dependent that names no traits gets the core and `@Entry`, and resolves nothing an
        // adapter or a database needs; this package's own build (`swift run ExampleServer`,
        // `swift test`) needs everything.
        .default(enabledTraits: isRootPackage ? ["Macros", "Instrumentation", "Example"] : ["Macros"]),
    ],
    dependencies: [
        // The widest range the macro compiles against, so an app that pins another macro package to
        // an older swift-syntax can still add Scoped (each bound checked by scripts/downstream).
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.0"..<"604.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        // Reloading: the file provider that watches the example's configuration files.
        .package(
            url: "https://github.com/apple/swift-configuration.git",
            from: "1.4.0",
            traits: [.defaults, "Reloading"]
        ),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.9.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        // The example's OTLP export. Over HTTP only: its gRPC exporter would add
        // grpc-swift-protobuf to every build of the example for a second way to send the same data.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.0"),
        .package(url: "https://github.com/vapor/swift-openapi-vapor.git", from: "1.2.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.0"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.0"),
    ],
    targets: [
        .macro(
            name: "ScopedMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "Scoped",
            dependencies: [
                .target(name: "ScopedMacros", condition: .when(traits: ["Macros"])),
                // A close failure that cannot be thrown is logged where the server's logs go.
                .product(name: "Logging", package: "swift-log"),
            ],
            // The core holds no unsafe construct: the compiler checks it.
            swiftSettings: [.strictMemorySafety()]
        ),
        .target(name: "ScopedTesting", dependencies: ["Scoped", "ScopedDatabase", "ScopedTenants"]),
        // The dependency graph a root records while its services are built: a ScopeObserver.
        .target(name: "ScopedDiagnostics", dependencies: ["Scoped"]),
        // A root replaced while the application runs, carrying over the app services whose
        // inputs did not change: a ScopeObserver records what they read.
        .target(name: "ScopedReload", dependencies: ["Scoped"]),
        // A root's open tenants: how many, for how long, and what each one's values are; the
        // root's TenantProvider, installed as an observer.
        .target(name: "ScopedTenants", dependencies: ["Scoped"]),
        // Spans and metrics of a root's scopes and services: a ScopeObserver the root installs.
        .target(
            name: "ScopedInstrumentation",
            dependencies: [
                "Scoped",
                "ScopedReload",
                "ScopedTenants",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // What both database layers share: a session's turn, its end, and its deadlines.
        .target(name: "ScopedDatabase", dependencies: ["Scoped"]),
        .target(name: "ScopedSQLite", dependencies: ["Scoped", "ScopedDatabase", "CSQLite"]),
        // Request scopes on PostgreSQL, on postgres-nio's PostgresClient.
        .target(
            name: "ScopedPostgres",
            dependencies: [
                "Scoped",
                "ScopedDatabase",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                // Settings kept in the database, read as a swift-configuration provider that runs
                // as a Service and reports its listening connection (postgres-nio depends on
                // both swift-service-lifecycle and swift-metrics already).
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // App services that are swift-service-lifecycle Services, run beside the application.
        .target(
            name: "ScopedServiceLifecycle",
            dependencies: [
                "Scoped",
                "ScopedReload",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ScopedHummingbird",
            dependencies: [
                "Scoped",
                "ScopedServiceLifecycle",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // WebSocket connections and their messages in scopes, on hummingbird-websocket.
        .target(
            name: "ScopedHummingbirdWebSocket",
            dependencies: [
                "Scoped",
                "ScopedHummingbird",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A request scope per Vapor 4 request.
        .target(
            name: "ScopedVapor",
            dependencies: [
                "Scoped",
                "ScopedServiceLifecycle",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Fluent's queries in a request scope, in one transaction that ends with the scope.
        .target(
            name: "ScopedFluent",
            dependencies: [
                "Scoped",
                "ScopedDatabase",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // A request scope around generated OpenAPI handlers, whatever the transport.
        .target(
            name: "ScopedOpenAPI",
            dependencies: [
                "Scoped",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A scope per grpc-swift 2 RPC, and per message of a streaming one.
        .target(
            name: "ScopedGRPC",
            dependencies: [
                "Scoped",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
            ]
        ),
        // The example's movie catalog: repositories, HTTP handlers and middleware, shared by
        // ExampleServer and the hand-wired server the load benchmark compares it with.
        .target(
            name: "MovieCatalog",
            dependencies: [
                "Scoped",
                "ScopedDiagnostics",
                "ScopedReload",
                "ScopedTenants",
                "ScopedDatabase",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedHummingbird",
                "ScopedHummingbirdWebSocket",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
            ],
            // The contract the code in OpenAPI/ is generated from (scripts/regenerate-openapi.sh).
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"]
        ),
        // The example server's application: configuration, root, routes, server, jobs.
        .target(
            name: "CatalogApp",
            dependencies: [
                "MovieCatalog",
                "Scoped",
                "ScopedDatabase",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedServiceLifecycle",
                "ScopedInstrumentation",
                "ScopedDiagnostics",
                "ScopedReload",
                "ScopedTenants",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "ScopedHummingbird",
                "ScopedHummingbirdWebSocket",
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        // `swift run ExampleServer`: the catalog application's entry point, and nothing else, so
        // that tests import the application as a library.
        .executableTarget(
            name: "ExampleServer",
            dependencies: [
                "CatalogApp",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The load benchmark's hand-wired server (Benchmarks/load.sh): ExampleServer's stack
        // with the session and repository passed by hand instead of read from a request scope.
        .executableTarget(
            name: "HandWiredCatalog",
            dependencies: [
                "CatalogApp",
                "MovieCatalog",
                "Scoped",
                "ScopedDatabase",
                "ScopedHummingbird",
                "ScopedSQLite",
                "ScopedPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Benchmarks/HandWiredCatalog"
        ),
        // The round-trips benchmark's baseline (Benchmarks/round-trips.sh): the catalog's
        // PostgreSQL routes on Hummingbird and postgres-nio alone, as a team writes them today.
        .executableTarget(
            name: "PlainCatalog",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/PlainCatalog"
        ),
        // The adapter benchmark's servers (Benchmarks/adapter-counts.sh): one handler on Vapor,
        // on an OpenAPI transport and on gRPC, with and without the adapter's request scope.
        .executableTarget(
            name: "AdapterServers",
            dependencies: [
                "Scoped",
                "ScopedVapor",
                "ScopedOpenAPI",
                "ScopedGRPC",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/AdapterServers"
        ),
        // The reliability suite (scripts/reliability/run): drives the built ExampleServer.
        .executableTarget(
            name: "ReliabilitySuite",
            dependencies: ["Scoped", "ScopedSQLite", "CSQLite", "ScopedTestSupport"],
            path: "scripts/reliability/Sources/ReliabilitySuite"
        ),
        // Helpers shared by the test targets: temporary folders, one-shot signals, log capture, a
        // raw HTTP connection that can stop reading at any byte.
        .target(
            name: "ScopedTestSupport",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/ScopedTestSupport"
        ),
        // The shared session tests' backends, SQLite and PostgreSQL, for every test target that
        // runs a session behind an adapter.
        .target(
            name: "SessionTestSupport",
            dependencies: [
                "Scoped",
                "ScopedTenants",
                "ScopedDatabase",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedServiceLifecycle",
                "ScopedTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SessionTestSupport"
        ),
        .testTarget(
            name: "ScopedTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "Scoped",
                "ScopedInstrumentation",
                "ScopedDiagnostics",
                "ScopedTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // The examples of the core's and the databases' doc comments, compiled (a module of their own: they declare
        // the same names as other tests, as the docs do).
        .testTarget(
            name: "ScopedDocSnippetTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "Scoped",
                "ScopedDatabase",
                "ScopedSQLite",
                "ScopedServiceLifecycle",
                "ScopedTesting",
                "ScopedTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "ScopedTestingTests", dependencies: ["ScopedTesting", "ScopedTestSupport"]),
        .testTarget(name: "ScopedDiagnosticsTests", dependencies: ["ScopedDiagnostics"]),
        .testTarget(name: "ScopedReloadTests", dependencies: ["ScopedReload"]),
        .testTarget(
            name: "ScopedInstrumentationTests",
            dependencies: ["ScopedInstrumentation", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        .testTarget(
            name: "ScopedSQLiteTests",
            dependencies: [
                "ScopedTenants",
                "ScopedSQLite", "ScopedDatabase", "ScopedTesting", "ScopedTestSupport",
                // Run as a process of its own, to show that nothing of the library outlives a root.
                "LibraryOwnershipProbe",
            ]
        ),
        .executableTarget(
            name: "LibraryOwnershipProbe",
            dependencies: ["Scoped", "ScopedSQLite", "ScopedTenants", "ScopedTestSupport"],
            path: "Tests/LibraryOwnershipProbe"
        ),
        .testTarget(
            name: "ScopedServiceLifecycleTests",
            dependencies: [
                "ScopedReload",
                "Scoped",
                "ScopedServiceLifecycle",
                "ScopedTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What every database session promises, written once and run on each backend.
        .testTarget(
            name: "ScopedDatabaseTests",
            dependencies: [
                "ScopedDatabase",
                "ScopedTesting",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedServiceLifecycle",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                // The adapter article's worked example: a plain SwiftNIO HTTP server.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ScopedPostgresTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "ScopedPostgres",
                "ScopedDatabase",
                "ScopedTesting",
                "ScopedServiceLifecycle",
                "ScopedTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // An event loop of a test's own, which the test stops.
                .product(name: "NIOPosix", package: "swift-nio"),
                // The settings provider, read through a ConfigReader as an application would.
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        .testTarget(
            name: "ScopedHummingbirdTests",
            dependencies: [
                "ScopedTenants",
                "ScopedHummingbird",
                "ScopedServiceLifecycle",
                "ScopedSQLite",
                "ScopedTesting",
                "SessionTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "ScopedTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ScopedHummingbirdWebSocketTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "ScopedHummingbirdWebSocket",
                "ScopedTesting",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ExampleServerTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "CatalogApp",
                "ScopedInstrumentation",
                "ScopedDiagnostics",
                "CSQLite",
                "ScopedDatabase",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedServiceLifecycle",
                "ScopedHummingbird",
                "ScopedHummingbirdWebSocket",
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                "MovieCatalog",
                "ScopedTesting",
                "ScopedTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "ScopedVaporTests",
            dependencies: [
                "ScopedTenants",
                "ScopedReload",
                "ScopedVapor",
                "ScopedSQLite",
                "ScopedPostgres",
                "ScopedDatabase",
                "ScopedTesting",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ScopedFluentTests",
            dependencies: [
                "ScopedFluent",
                "ScopedVapor",
                "ScopedTesting",
                "ScopedTestSupport",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ScopedOpenAPITests",
            dependencies: [
                "ScopedOpenAPI",
                "ScopedHummingbird",
                "ScopedVapor",
                "ScopedTesting",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIVapor", package: "swift-openapi-vapor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // The document the committed Swift in Generated/ is made from (scripts/regenerate-openapi.sh).
            exclude: ["Generated/openapi.yaml", "Generated/openapi-generator-config.yaml"]
        ),
        // What the README promises of every adapter, asserted the same way on each stack and each
        // database (issue 37): one conformance app served through each adapter.
        .testTarget(
            name: "ScopedConformanceTests",
            dependencies: [
                "ScopedReload",
                "ScopedTesting",
                "ScopedHummingbird",
                "ScopedHummingbirdWebSocket",
                "ScopedVapor",
                "ScopedOpenAPI",
                "ScopedGRPC",
                "ScopedServiceLifecycle",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIVapor", package: "swift-openapi-vapor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCInProcessTransport", package: "grpc-swift-2"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "VaporTesting", package: "vapor"),
            ],
            // The document the committed Swift in OpenAPI/ is made from (scripts/regenerate-openapi.sh).
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"]
        ),
        .testTarget(
            name: "ScopedGRPCTests",
            dependencies: [
                "ScopedTenants",
                "ScopedGRPC",
                "ScopedSQLite",
                "ScopedDatabase",
                "ScopedTesting",
                "ScopedTestSupport",
                "SessionTestSupport",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            ]
        ),
        .testTarget(
            name: "ScopedMacrosTests",
            // The compiler expands `@Entry` in these tests, with the plug-in the `Scoped` module's
            // build made; a test target that linked swift-syntax would have it compiled a second
            // time, for the target as well as the host (about 240 s of CPU here).
            dependencies: ["Scoped"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The trait each target's packages come with: `Scoped`, `ScopedTesting` and `ScopedSQLite` need
// none (the core's macro has its own condition above). Without
// `Macros`, swift-syntax is not even resolved.
let traitOfTarget: [String: String] = [
    "ScopedMacros": "Macros",
    "ScopedInstrumentation": "Instrumentation",
    "ScopedInstrumentationTests": "Instrumentation",
    "ScopedMacrosTests": "Macros",
    "ScopedServiceLifecycle": "ServiceLifecycle",
    "ScopedHummingbird": "Hummingbird",
    "ScopedHummingbirdWebSocket": "HummingbirdWebSocket",
    "ScopedPostgres": "PostgreSQL",
    "ScopedVapor": "Vapor",
    "ScopedOpenAPI": "OpenAPI",
    "ScopedGRPC": "GRPC",
    "ScopedFluent": "Fluent",
    "ScopedVaporTests": "Example",
    "ScopedFluentTests": "Example",
    "ScopedOpenAPITests": "Example",
    "ScopedGRPCTests": "Example",
    "ScopedConformanceTests": "Example",
    "MovieCatalog": "Example",
    "CatalogApp": "Example",
    "ExampleServer": "Example",
    "HandWiredCatalog": "Example",
    "PlainCatalog": "Example",
    "AdapterServers": "Example",
    "ReliabilitySuite": "Example",
    "ScopedTestSupport": "Example",
    "SessionTestSupport": "Example",
    "ScopedPostgresTests": "Example",
    "ScopedDatabaseTests": "Example",
    "ScopedServiceLifecycleTests": "ServiceLifecycle",
    "ScopedHummingbirdTests": "Example",
    "ScopedHummingbirdWebSocketTests": "Example",
    "ExampleServerTests": "Example",
]
for target in package.targets {
    guard let trait = traitOfTarget[target.name] else { continue }
    target.dependencies = target.dependencies.map { dependency in
        guard case .productItem(let name, let package?, let moduleAliases, nil) = dependency else { return dependency }
        return .product(name: name, package: package, moduleAliases: moduleAliases, condition: .when(traits: [trait]))
    }
}

// The upcoming features swift-log and swift-configuration build with, on every target.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    ])
    target.swiftSettings = settings
}
