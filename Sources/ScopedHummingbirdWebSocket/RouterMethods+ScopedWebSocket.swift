public import Hummingbird
public import HummingbirdWebSocket
import Logging
public import Scoped
import ScopedHummingbird

extension RouterMethods where Context: WebSocketRequestContext {
    /// Adds a WebSocket route whose every connection runs in its own scope, a child of `root`
    /// (for a `ReloadableScopeRoot`, of the root current when it connects: a connection keeps
    /// that root for its lifetime, across reloads).
    ///
    /// The connection's scope holds the upgrade request's ID (`ScopedValues.requestID`:
    /// a client's `X-Request-ID` that `RequestIDMiddleware` accepted, else
    /// Hummingbird's ID) and whatever `update` sets. It is open for as long as the connection:
    /// its `ScopedLifetime.scope` services (a subscription, a connection's session) are
    /// built once for the connection and close once when it ends, with
    /// `ScopeOutcome.success` when `handler` returned (the client closed),
    /// `ScopeOutcome.failure(_:)` when it threw and `ScopeOutcome.cancelled`
    /// when it was cancelled (the server shut down). Handle each message in a scope of its own
    /// with `WebSocketInboundStream.forEachMessage(maxSize:_:then:)`.
    ///
    /// ```swift
    /// webSocketRouter.add(middleware: RequestIDMiddleware())
    /// webSocketRouter.ws("/live", root: root) { inbound, outbound, _ in
    ///     try await inbound.forEachMessage(maxSize: 1 << 16) { message in
    ///         try await handle(message)  // in the message's scope: commits when it returns
    ///     } then: { reply in
    ///         try await outbound.write(.text(render(reply)))  // after the commit or the rollback
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: the route's path.
    ///   - root: the application root every connection's scope is a child of.
    ///   - tenant: the tenant each connection belongs to, from the upgrade request, fixed for the
    ///     connection and its messages; by default none. An error it throws refuses the upgrade
    ///     with that error, before anything of a tenant is opened.
    ///   - update: changes each connection's scope as it opens, from the upgrade request. An
    ///     error it throws closes the connection; refuse upgrades in `shouldUpgrade` instead.
    ///   - shouldUpgrade: whether to upgrade a request, and with which headers.
    ///   - handler: the connection's handler, run inside the connection's scope.
    /// - Returns: the router, to add more routes.
    @discardableResult
    public func ws(
        _ path: RouterPath = "",
        root: some ScopeRootSource,
        tenant: (@Sendable (Request, Context) throws -> TenantID?)? = nil,
        update: @escaping @Sendable (inout ScopedValues, Request, Context) throws -> Void = { _, _, _ in },
        shouldUpgrade: @escaping @Sendable (Request, Context) async throws -> RouterShouldUpgrade = { _, _ in
            .upgrade([:])
        },
        onUpgrade handler: @escaping WebSocketDataHandler<WebSocketRouterContext<Context>>
    ) -> Self {
        ws(
            path,
            currentRoot: root,
            tenant: tenant,
            update: update,
            shouldUpgrade: shouldUpgrade,
            onUpgrade: handler
        )
    }

    private func ws(
        _ path: RouterPath,
        currentRoot: any ScopeRootSource,
        tenant: (@Sendable (Request, Context) throws -> TenantID?)?,
        update: @escaping @Sendable (inout ScopedValues, Request, Context) throws -> Void,
        shouldUpgrade: @escaping @Sendable (Request, Context) async throws -> RouterShouldUpgrade,
        onUpgrade handler: @escaping WebSocketDataHandler<WebSocketRouterContext<Context>>
    ) -> Self {
        // The tenant is checked before the upgrade, so that a request for none, or an invalid
        // one, is answered with the resolver's error rather than a connection that closes.
        let upgradeIfTenantResolves: @Sendable (Request, Context) async throws -> RouterShouldUpgrade =
            if let tenant {
                { request, context in
                    _ = try tenant(request, context)
                    return try await shouldUpgrade(request, context)
                }
            } else {
                shouldUpgrade
            }
        return ws(path, shouldUpgrade: upgradeIfTenantResolves) { inbound, outbound, context in
            let setUp: (inout ScopedValues) throws -> Void = { values in
                let upgrade = context.requestContext
                // The ID the upgrade request's log lines carried, after RequestIDMiddleware.
                values.requestID = upgrade.logger[metadataKey: "hb.request.id"]?.description ?? upgrade.id
                try update(&values, context.request, upgrade)
            }
            try await currentRoot.current
                .withScope(tenant: try tenant?(context.request, context.requestContext), setUp) {
                    try await handler(inbound, outbound, context)
                }
        }
    }
}
