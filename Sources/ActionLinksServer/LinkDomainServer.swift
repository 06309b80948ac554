import ActionLinks
import ActionLinksConfiguration
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// Builds the link domain exactly as `actionlinks serve` runs it, so tests start what production runs.
public enum LinkDomainServer {
    /// The application for `configuration`, serving the pages and templates in `www`.
    ///
    /// `onRunning` receives the URL the server listens on once the socket is bound (with the real
    /// port when the configuration asks for port 0).
    public static func buildApplication(
        configuration: ActionLinksConfiguration, www: String, logger: Logger, onRunning: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let settings = configuration.service
        let store: SQLiteDatabase
        switch settings.store {
        case .sqlite(let path):
            do {
                store = try SQLiteDatabase(path: path)
            } catch {
                throw ServerStartError("store: cannot open the SQLite database at \(path): \(error)")
            }
        case .postgres:
            throw ServerStartError("store: PostgreSQL is not available in this build yet; use sqlite:<path>")
        }
        let keys: ServerKeys
        do {
            keys = try ServerKeys(directory: settings.dataDirectory)
        } catch {
            throw ServerStartError("dataDirectory: \(error)")
        }
        let templates = try await PageTemplates(www: www, defaultLanguage: settings.pages.defaultLanguage)
        let staticFiles = try StaticFiles(www: www)
        let metrics = ServerMetrics()
        let mailer = Mailer(settings: settings.mail, templates: templates, metrics: metrics, logger: logger)
        if case .log = settings.mail.backend, !settings.server.development {
            logger.warning("mail.backend is log: links are printed to standard output, not emailed; configure sendmail or webhook")
        }
        let service = ActionService(configuration: configuration, codes: store.codes, accounts: store.accounts, keys: keys, mailer: mailer, metrics: metrics, logger: logger)
        let responder = try LinkDomainResponder(service: service, templates: templates, staticFiles: staticFiles)
        let server: HTTPServerBuilder
        let scheme: String
        let files = responder.prebuiltFiles
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [AssociationFastPath(files: files)])
        if let tls = settings.server.tls {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate).map { NIOSSLCertificateSource.certificate($0) }
                let key = try NIOSSLPrivateKey(file: tls.privateKey, format: .pem)
                server = try .tls(.http1(configuration: http1), tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
            } catch {
                throw ServerStartError("server.tls: cannot load \(tls.certificate) / \(tls.privateKey): \(error)")
            }
            scheme = "https"
        } else {
            server = .http1(configuration: http1)
            scheme = "http"
        }
        let storeDescription = settings.store.description
        let domains = settings.linkDomains.map(\.origin).joined(separator: ", ")
        return Application(
            responder: responder, server: server,
            configuration: .init(address: .hostname(settings.server.host, port: settings.server.port), serverName: nil),
            services: [mailer, CodePurge(codes: store.codes, logger: logger)],
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.server.port
                let host = settings.server.host.contains(":") ? "[\(settings.server.host)]" : settings.server.host
                let url = "\(scheme)://\(host):\(port)"
                logger.notice("serving \(url) for \(domains); store \(storeDescription)")
                onRunning(url)
            },
            logger: logger)
    }
}

/// A problem that stops the server from starting, named by its configuration key.
public struct ServerStartError: Error, CustomStringConvertible {
    /// What is wrong and where.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Deletes codes a week after they expired or were used, once an hour.
struct CodePurge: Service {
    let codes: any CodeStore
    let logger: Logger

    func run() async throws {
        let week: Timestamp = 7 * 86_400_000
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let removed = try await codes.purge(before: .now - week)
                    if removed > 0 { logger.info("purged old codes", metadata: ["count": "\(removed)"]) }
                } catch {
                    logger.warning("purging old codes failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .seconds(3600))
            }
        }
    }
}
