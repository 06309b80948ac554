import Foundation

/// What a production deployment of these settings lacks (`actionlinks config check --production`;
/// the same findings are warnings when a production server starts): each a setting that works on a
/// developer's machine and fails people in production.
public struct ProductionFinding: Sendable, Hashable, CustomStringConvertible {
    /// The key to change.
    public var key: String
    /// What is wrong there, and what to do.
    public var message: String

    /// `key: message`.
    public var description: String { "\(key): \(message)" }
}

extension ServiceSettings {
    /// The findings for these settings on the machine `environment` describes (Cloud Run sets
    /// `K_SERVICE`, Kubernetes `KUBERNETES_SERVICE_HOST`); `dataDirectoryHasKeys` says whether
    /// the data directory holds keys already.
    public func productionFindings(environment: [String: String], dataDirectoryHasKeys: Bool) -> [ProductionFinding] {
        var findings: [ProductionFinding] = []
        func find(_ key: String, _ message: String) { findings.append(ProductionFinding(key: key, message: message)) }
        let cloudRun = environment["K_SERVICE"].map { !$0.isEmpty } ?? false
        let kubernetes = environment["KUBERNETES_SERVICE_HOST"].map { !$0.isEmpty } ?? false
        if server.development {
            find(
                "server.development",
                "a development server takes 'Bearer owner' as the admin credential and answers as Firebase's emulator; set false, with server.adminToken"
            )
        }
        if case .log = mail.backend {
            find(
                "mail.backend",
                "log prints each mail instead of sending it (on a production server with its links and codes withheld), so nobody gets one; set smtp, sendmail or webhook"
            )
        }
        switch store {
        case .sqlite(let path):
            if cloudRun {
                find(
                    "store",
                    "SQLite at \(path) on Cloud Run (K_SERVICE is set) lives in the instance's memory: every new instance starts empty, and several instances never share a code; use PostgreSQL (Cloud SQL: postgres://user:password@/database?host=/cloudsql/PROJECT:REGION:INSTANCE)"
                )
            } else if kubernetes {
                find(
                    "store",
                    "SQLite at \(path) on Kubernetes: a pod's files go with the pod, and replicas never share a code; use PostgreSQL, or one replica with the data directory on a persistent volume"
                )
            }
        case .postgres(let location):
            if !keys.isShared {
                find(
                    "keys",
                    dataDirectoryHasKeys
                        ? "instances on one PostgreSQL read their keys from their own data directories, which must then hold the same files; put them in one secret (actionlinks keys init --from-data-directory <folder>) and set keys.file"
                        : "instances on one PostgreSQL must share their keys and a server never invents them there: make them with actionlinks keys init, store them as one secret and set keys.file"
                )
            }
            if !location.isLoopback, location.tlsMode != .verifyFull {
                find(
                    "store",
                    "PostgreSQL on \(location.host) with sslmode=\(location.tlsMode.rawValue): the connection's other end is not authenticated; add sslmode=verify-full (and sslrootcert= for a private authority)"
                )
            }
        }
        if server.trustedProxies.isEmpty, cloudRun || kubernetes {
            let platform = cloudRun ? "Cloud Run" : "Kubernetes"
            find(
                "server.trustedProxies",
                "on \(platform) every request comes through the platform's proxy, so without trustedProxies every client has the proxy's address and the per-IP limits are one bucket for everyone; docs/DEPLOYING.md gives the value for \(platform)"
            )
        }
        if server.tls == nil, server.trustedProxies.isEmpty, !server.isLoopback, !cloudRun, !kubernetes {
            find(
                "server.tls",
                "the server speaks plain HTTP on \(server.host) with no proxy in front (server.trustedProxies is empty); give it a certificate (server.tls) or put a TLS-terminating proxy in front and name it in trustedProxies"
            )
        }
        return findings
    }
}
