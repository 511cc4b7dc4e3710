public import GRPCCore
public import Scoped

/// A grpc-swift 2 server interceptor that runs every RPC in its own scope, a child of the
/// application root.
///
/// The scope holds the RPC's ID (`ScopedValues.requestID`: a valid `x-request-id` from the
/// client's metadata, 1 to 64 characters from `A-Z a-z 0-9 . _ -`, else a new ID) plus
/// whatever `update` sets from the call's context and metadata. For a streaming RPC the scope is
/// the call's: it stays open while the response stream is produced, and the handler can give
/// each inbound message a scope of its own with `forEachMessage(_:then:)`. It closes exactly
/// once:
///
/// - `ScopeOutcome.success` when the handler produced its response. The scope closes before
///   the RPC's status is sent, so a client that sees `ok` saw it after the RPC's transaction
///   committed; a commit that fails is the RPC's error.
/// - `ScopeOutcome.cancelled` when the client cancelled, or the RPC's deadline passed, before
///   the response was produced.
/// - `ScopeOutcome.failure(_:)` when the handler threw or rejected the RPC.
///
/// Errors pass through unchanged: an `RPCError` keeps its code, and grpc-swift turns any other
/// error into `unknown`.
///
/// ```swift
/// let server = GRPCServer(
///     transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
///     services: [CatalogService()],
///     interceptors: [RPCScopeInterceptor(root: root)]
/// )
/// ```
public struct RPCScopeInterceptor: ServerInterceptor {
    /// Changes an RPC's scope as it opens: select variants from metadata, set a principal.
    public typealias Update = @Sendable (inout ScopedValues, ServerContext, Metadata) throws -> Void

    /// Says which tenant an RPC belongs to, from its context and the client's metadata, or
    /// `nil` for none; an error it throws fails the RPC with that error, before anything of a
    /// tenant is opened.
    public typealias TenantResolver = @Sendable (ServerContext, Metadata) throws -> TenantID?

    private let root: any ScopeRootSource
    private let tenant: TenantResolver?
    private let update: Update

    /// Opens RPC scopes on `root`: a `ScopeRoot`, or a `ReloadableScopeRoot` whose current
    /// root each new RPC opens on, so a reload takes effect for new RPCs while those in
    /// flight keep the root they started with.
    ///
    /// - Parameters:
    ///   - root: the application root every RPC's scope is a child of.
    ///   - update: changes each RPC's scope as it opens, given its context (the method, the
    ///     peer) and the client's metadata; an error it throws fails the RPC with that error.
    public init(root: some ScopeRootSource, update: @escaping Update = { _, _, _ in }) {
        self.init(root: root, tenant: nil, update: update)
    }

    /// Opens RPC scopes on `root`, each for the tenant `tenant` says.
    ///
    /// - Parameters:
    ///   - root: the application root every RPC's scope is a child of.
    ///   - tenant: the tenant each RPC's scope belongs to, fixed as it opens; `nil`, or a
    ///     resolver that returns `nil`, for none (see `Tenancy`).
    ///   - update: changes each RPC's scope as it opens, given its context and the client's
    ///     metadata; an error it throws fails the RPC with that error.
    public init(root: some ScopeRootSource, tenant: TenantResolver?, update: @escaping Update = { _, _, _ in }) {
        self.root = root
        self.tenant = tenant
        self.update = update
    }

    /// Runs the rest of the chain, and the response's producer, in a new scope that closes
    /// before the RPC's status is sent.
    ///
    /// `@concurrent`, as the protocol's requirement is: grpc-swift is built without
    /// `NonisolatedNonsendingByDefault`, which this package enables.
    @concurrent
    public func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next:
            @concurrent @Sendable (StreamingServerRequest<Input>, ServerContext) async throws ->
            StreamingServerResponse<
                Output
            >
    ) async throws -> StreamingServerResponse<Output> {
        let setUp: (inout ScopedValues) throws -> Void = { values in
            values.requestID = Self.requestID(of: request.metadata)
            try update(&values, context, request.metadata)
        }
        let scope = try root.current.openScope(tenant: try tenant?(context, request.metadata), setUp)
        let cancellation = context.cancellation
        // An outcome that names a cancelled RPC as cancelled, whatever its handler threw.
        let outcome: @Sendable (any Error) -> ScopeOutcome = { error in
            cancellation.isCancelled ? .cancelled : ScopeOutcome(endingWith: error)
        }
        let response = try await scope.runClosingOnFailure(outcome: outcome) { try await next(request, context) }
        switch response.accepted {
        case .failure(let error):
            try? await scope.close(.failure(error))
            return response
        case .success(var contents):
            let producer = contents.producer
            contents.producer = { writer in
                let trailingMetadata = try await scope.runClosingOnFailure(outcome: outcome) {
                    try await producer(writer)
                }
                if cancellation.isCancelled {
                    try? await scope.close(.cancelled)
                    throw RPCError(code: .cancelled, message: "The RPC was cancelled before its response was complete.")
                }
                try await scope.close(.success)
                return trailingMetadata
            }
            return StreamingServerResponse(accepted: .success(contents))
        }
    }

    /// The client's `x-request-id` when it is valid, else a new ID.
    static func requestID(of metadata: Metadata) -> String {
        for case .string(let incoming) in metadata["x-request-id"] {
            if let accepted = RequestIDs.accepting(incoming) { return accepted }
        }
        return RequestIDs.next()
    }
}
