import Foundation
import Testing

@testable import ActionLinksConfiguration

@Suite("PostgreSQL store URLs", .timeLimit(.minutes(5)))
struct PostgresLocationTests {
    @Test("a full URL: escapes decoded, parameters read, the password never shown")
    func full() throws {
        let location = try PostgresLocation(
            url:
                "postgresql://links%40prod:p%3Ass%2Fw@db.internal:6543/action_links?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=1.5&statement_timeout=4&pool_size=32&application_name=edge-1"
        )
        #expect(location.username == "links@prod")
        #expect(location.password == "p:ss/w")
        #expect(location.host == "db.internal" && location.port == 6543 && location.database == "action_links")
        #expect(location.tlsMode == .verifyFull && location.rootCertificatePath == "/etc/ca.pem")
        #expect(
            location.connectTimeout == 1.5 && location.statementTimeout == 4 && location.poolSize == 32
                && location.applicationName == "edge-1")
        #expect(location.description == "postgres://links@prod:***@db.internal:6543/action_links")
        #expect(!location.description.contains("p:ss") && !location.isLoopback)
    }

    @Test("defaults: port 5432, the user's database, sslmode prefer, 3 s to connect")
    func defaults() throws {
        let location = try PostgresLocation(url: "postgres://app@127.0.0.1")
        #expect(location.port == 5432 && location.database == "app" && location.password == nil)
        #expect(location.tlsMode == .prefer && location.connectTimeout == 3 && location.poolSize == 16 && location.isLoopback)
        #expect(try PostgresLocation(url: "postgres://app@[::1]:5433/db").host == "::1")
    }

    @Test("a Unix socket's folder as libpq takes it (Cloud SQL on Cloud Run): no host, host=<folder>, no TLS needed, never the password")
    func socket() throws {
        let location = try PostgresLocation(url: "postgres://links:s%40cret@/action_links?host=/cloudsql/demo:europe-west1:links")
        #expect(location.host.isEmpty && location.socketDirectory == "/cloudsql/demo:europe-west1:links")
        #expect(location.socketPath == "/cloudsql/demo:europe-west1:links/.s.PGSQL.5432" && location.password == "s@cret")
        #expect(location.database == "action_links" && location.isLoopback)
        #expect(location.description == "postgres://links:***@/action_links?host=/cloudsql/demo:europe-west1:links")
        #expect(try PostgresLocation(url: "postgresql://app@:6432/db?host=/run/pg/").socketPath == "/run/pg/.s.PGSQL.6432")
    }

    @Test(
        "bad URLs say what is wrong",
        arguments: [
            ("postgres://127.0.0.1/db", "names no user"),
            ("postgres://app@/db", "names no host"),
            ("postgres://app@h/db?sslmode=always", "sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
            ("postgres://app@h/db?ssl=true", "unknown parameter 'ssl'"),
            ("postgres://app@h/db?pool_size=0", "pool_size must be"),
            ("postgres://app@h/db?connect_timeout=soon", "connect_timeout must be a number of seconds"),
            ("postgres://app@h/db?sslrootcert=/ca.pem", "only used with sslmode=verify-ca or verify-full"),
            ("postgres://app@h/a/b", "one database name"),
            ("postgres://app@/db?host=cloudsql/p:r:i", "absolute path of the folder"),
            ("postgres://app@h/db?host=/cloudsql/p:r:i", "names a host and a socket folder"),
            ("postgres://app@/db?host=/" + String(repeating: "x", count: 100), "longer than a Unix socket's 107 bytes"),
        ])
    func bad(url: String, message: String) {
        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url) }
        do {
            _ = try PostgresLocation(url: url)
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test("the store key takes a PostgreSQL URL, from the file or the environment, and names itself when it is wrong")
    func storeKey() throws {
        let settings = try ConfigurationText.service("store: postgres://a:secret@db:5432/links\n")
        guard case .postgres(let location) = settings.store else { Issue.record("expected a PostgreSQL store"); return }
        #expect(location.database == "links" && settings.store.description == "postgres://a:***@db:5432/links")

        let fromEnvironment = try ConfigurationText.service("", environment: ["ACTIONLINKS_STORE": "postgres://b@db/x?sslmode=require"])
        guard case .postgres(let other) = fromEnvironment.store else { Issue.record("expected a PostgreSQL store"); return }
        #expect(other.username == "b" && other.tlsMode == .require)

        do {
            _ = try ConfigurationText.configuration("store: postgres://a:secret@db/links?sslmode=on\n")
            Issue.record("expected an error")
        } catch {
            #expect(error.key == "store" && error.file == "t.yaml")
            #expect(error.description.contains("sslmode must be one of") && !error.description.contains("secret"))
        }
    }
}
