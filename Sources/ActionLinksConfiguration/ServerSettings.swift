import ActionLinks
import ActionLinksHeaders
import Foundation

/// Where the server listens and who may use its admin API (`server`).
public struct ServerSettings: Sendable, Hashable {
    /// The address to bind (default `127.0.0.1`; every interface when the platform sets `PORT`).
    public var host = "127.0.0.1"
    /// Whether `server.host` was given (in the file or its variable): then `PORT` leaves it alone.
    public var hostGiven = false
    /// The port to bind (default 8080; 0 picks a free one and the start line says which).
    public var port = 8080
    /// A development server: `Authorization: Bearer owner` is the admin credential, as on Firebase's
    /// emulator, so firebase-admin works against it unchanged. Only allowed on a loopback address.
    public var development = false
    /// The admin credential (`Authorization: Bearer <token>`) of a production server.
    public var adminToken: String?
    /// The credential a Prometheus scraper sends for `/metrics` (`Authorization: Bearer <token>`);
    /// the admin credential works too.
    public var metricsToken: String?
    /// TLS certificate and key files (PEM); without them the server speaks plain HTTP, for a proxy
    /// that terminates TLS in front of it.
    public var tls: TLSFiles?
    /// The largest request body accepted; larger ones get 413.
    public var maximumBodyBytes = 64 * 1024
    /// The reverse proxies whose forwarding headers (``proxyHeaders``) are believed (addresses or
    /// CIDR blocks). From any other peer those headers are ignored.
    public var trustedProxies: [IPNetwork] = []
    /// The headers the trusted proxies write (`server.proxyHeaders`); the other kind is never
    /// read, since a proxy passes on what it does not write and the client wrote it.
    public var proxyHeaders = ProxyHeaders.xforwarded
    /// Seconds a connection may stay open with no request on it.
    public var idleTimeout = 60
    /// Seconds a request's head (request line and headers) may take to arrive, from its first byte
    /// (from the accept, for a connection's first request, so a TLS handshake counts too).
    public var headerTimeout = 10
    /// Seconds a request's body may take to arrive after its head.
    public var bodyTimeout = 30
    /// Seconds a stop (SIGTERM, SIGINT) may take: requests in flight finish within it, then what is
    /// left is cancelled (Cloud Run and Kubernetes kill the process 10 and 30 seconds after SIGTERM).
    public var shutdownTimeout = 8
    /// Connections open at once; beyond it new connections wait in the listen queue until one closes.
    ///
    /// Each open connection holds a file descriptor and, while it sends a request, up to about
    /// 150 KB of buffers (80 KB of headers, the largest body); 1024 bounds that near 150 MB and fits
    /// the usual descriptor limit (the server raises its soft limit to fit when the hard one allows).
    public var maximumConnections = 1024
    /// Other URLs this server's OAuth token endpoint is reached at (`POST /token`), accepted as
    /// the audience of a service account's JWT-bearer assertion besides Google's token URL and the
    /// link domains' `/token` (RFC 7523 §3: an assertion must name the server it is for).
    public var tokenAudiences: [String] = []

    /// Which forwarding headers a trusted proxy writes (as Keycloak's `proxy-headers`).
    public enum ProxyHeaders: String, Sendable, Hashable, CaseIterable {
        /// `X-Forwarded-For` (appended to, as nginx's `$proxy_add_x_forwarded_for`, Google's load
        /// balancers, Cloud Run and Kubernetes' ingress-nginx do) and `X-Forwarded-Proto`.
        case xforwarded
        /// `Forwarded` (RFC 7239: `for=` and `proto=`), appended to.
        case forwarded
    }

    /// PEM files for TLS.
    public struct TLSFiles: Sendable, Hashable {
        /// The certificate chain (PEM).
        public var certificate: String
        /// The private key (PEM).
        public var privateKey: String
    }

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { Loopback.isLoopback(host) }
}

extension ServerSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, development, adminToken, metricsToken, trustedProxies, tls, maximumBodyBytes, idleTimeout, headerTimeout
        case bodyTimeout, maximumConnections, tokenAudiences, proxyHeaders, shutdownTimeout
    }

    enum TLSKeys: String, CodingKey, CaseIterable {
        case certificate, privateKey
    }

    /// Reads `server`; a development server must listen on loopback, and tokens must be long.
    public init(from decoder: any Decoder) throws {
        self.init()
        let server = try decoder.container(keyedBy: CodingKeys.self)
        if let given = try server.string(.host) {
            host = given
            hostGiven = true
        }
        port = try server.integer(.port, in: 0...65535) ?? port
        development = try server.boolean(.development) ?? development
        adminToken = try server.string(.adminToken)
        maximumBodyBytes = try server.integer(.maximumBodyBytes, in: 1024...(16 << 20)) ?? maximumBodyBytes
        idleTimeout =
            try server.duration(.idleTimeout, in: 1...3600, kind: "a timeout", examples: "60s or 5m") ?? idleTimeout
        headerTimeout =
            try server.duration(.headerTimeout, in: 1...600, kind: "a timeout", examples: "10s or 1m") ?? headerTimeout
        bodyTimeout = try server.duration(.bodyTimeout, in: 1...3600, kind: "a timeout", examples: "30s or 5m") ?? bodyTimeout
        shutdownTimeout =
            try server.duration(.shutdownTimeout, in: 1...3600, kind: "a timeout", examples: "8s or 1m") ?? shutdownTimeout
        maximumConnections = try server.integer(.maximumConnections, in: 1...1_000_000) ?? maximumConnections
        let files = try server.nestedContainer(keyedBy: TLSKeys.self, forKey: .tls)
        let certificate = try files.string(.certificate)
        let privateKey = try files.string(.privateKey)
        if let certificate, let privateKey {
            tls = TLSFiles(certificate: certificate, privateKey: privateKey)
        } else if certificate != nil || privateKey != nil {
            throw server.problem(.tls, "expected both certificate and privateKey (PEM file paths)")
        }
        if development, !isLoopback {
            throw server.problem(
                .development,
                "a development server accepts 'Bearer owner' as the admin credential, so it must listen on a loopback address (127.0.0.1, ::1 or localhost), not '\(host)'"
            )
        }
        if let token = adminToken, token.count < 32 {
            throw server.problem(.adminToken, "expected at least 32 characters (use `openssl rand -hex 32`)")
        }
        metricsToken = try server.string(.metricsToken)
        if let token = metricsToken, token.utf8.count < 32 || !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw server.problem(
                .metricsToken, "expected at least 32 printable ASCII characters without spaces (use `openssl rand -hex 32`)")
        }
        for (index, text) in try server.strings(.trustedProxies).enumerated() {
            guard let network = IPNetwork(text) else {
                throw server.problem(
                    .trustedProxies, index: index, "expected an IP address or a CIDR block such as 10.0.0.0/8 or ::1/128; got '\(text)'")
            }
            trustedProxies.append(network)
        }
        proxyHeaders = try server.choice(.proxyHeaders, as: ProxyHeaders.self) ?? proxyHeaders
        for (index, text) in try server.strings(.tokenAudiences).enumerated() {
            guard let url = UpstreamSettings.checkedURL(text), let path = URLComponents(string: url)?.path, path.count > 1 else {
                throw server.problem(
                    .tokenAudiences, index: index,
                    "expected the https URL of this server's token endpoint, such as https://auth.example.com/token (http only for a loopback host); got '\(text)'"
                )
            }
            tokenAudiences.append(url)
        }
    }
}
