import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import Foundation

/// A store under test: every store protocol on one database.
public struct StoreUnderTest: Sendable {
    public let name: String
    public let codes: any CodeStore
    public let accounts: any AccountStore
    public let tenants: any TenantStore
    public let signInCodes: any SignInCodeStore
    public let outbox: any MailOutboxStore
}

/// Makes a fresh, empty store for each test: an SQLite file, or a new database on the test
/// PostgreSQL server (see ``PostgresTestServer``).
public enum StoreFactory {
    public static let kinds = ["sqlite", "postgres"]

    public static func make(_ kind: String) async throws -> StoreUnderTest {
        switch kind {
        case "sqlite":
            let path = TestProject.temporaryDirectory("actionlinks-store").appendingPathComponent("test.sqlite")
                .path
            let database = try SQLiteDatabase(path: path)
            return StoreUnderTest(
                name: kind, codes: database.codes, accounts: database.accounts, tenants: database.tenants,
                signInCodes: database.signInCodes, outbox: database.outbox)
        case "postgres":
            let database = try await PostgresTestServer.freshStore()
            return StoreUnderTest(
                name: kind, codes: database.codes, accounts: database.accounts, tenants: database.tenants,
                signInCodes: database.signInCodes, outbox: database.outbox)
        default:
            throw CocoaError(.featureUnsupported)
        }
    }
}
