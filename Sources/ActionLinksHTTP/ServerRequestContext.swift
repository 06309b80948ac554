import ActionLinksDomain
import Hummingbird
import NIOCore

/// The request context: what the responder needs beyond the request itself.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket peer's IP address (a proxy's when one is in front).
    public let peerAddress: String?
    /// The client's IP address: the peer's, or the one a trusted proxy names (``ClientIdentity``).
    public var clientAddress: String?
    /// Whether the client reached us over HTTPS: TLS here, a trusted proxy's `https`, or, without
    /// either, any server that is not a development server (production sits behind a TLS proxy).
    public var isSecure = true
    /// Who is calling the REST API, once ``APIAuthenticationMiddleware`` has checked the credential.
    public var caller: APICaller?
    /// The request's body, read and size-checked by ``RequestBodyLimitMiddleware`` before any handler
    /// runs (empty for a method without a body, or where that middleware is not installed).
    public var body = ByteBuffer()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress
    }
}
