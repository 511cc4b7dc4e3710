import GRPCCore
import GRPCNIOTransportHTTP2
import Scoped
import ScopedGRPC

// The snippet of ScopedGRPC's doc comment, verbatim between the markers.

/// The doc's service: any service will do.
struct CatalogService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {}
}

/// Compiled for RPCScopeInterceptor's doc comment, not run: RPCScopeInterceptorTests serves
/// RPCs through the interceptor on a live server.
func serverWithRequestScopes(root: ScopeRoot) -> GRPCServer<HTTP2ServerTransport.Posix> {
    // SNIPPET-BEGIN
    let server = GRPCServer(
        transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
        services: [CatalogService()],
        interceptors: [RPCScopeInterceptor(root: root)]
    )
    // SNIPPET-END
    return server
}
