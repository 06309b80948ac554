import ActionLinks
import ActionLinksDomain
import Foundation
import NIOCore
import PostgresNIO

extension PostgresAccountStore: OneStatementEmailLinkSignIn {
    /// An email-link sign-in without a signed-in user in one statement, so one round trip and one
    /// atomic commit: the function `actionlinks_email_link_sign_in` locks the code (then the
    /// account), and either refuses without changing anything or consumes the code, signs in or
    /// creates the account and adds `session` (whose `accountID` it replaces with the account's).
    /// ``ActionCompleter/signIn(code:email:user:tenant:consumer:)`` takes this path on PostgreSQL; it
    /// does what its unit of work does on the other stores. Concurrent sign-ins go together, in one
    /// statement and one commit (``emailLinkSignInBatch(_:database:)``).
    package func emailLinkSignIn(
        hashes: [Data], tenantID: String, email: String, now: Timestamp, consumer: String, newID: String, canCreate: Bool,
        session: Session
    ) async throws -> EmailLinkSignInOutcome {
        guard !hashes.isEmpty else { return .invalid }
        return try await database.emailLinkSignIns.submit(
            EmailLinkSignIn(
                hashes: hashes, tenantID: tenantID, email: email, now: now, consumer: consumer, newID: newID, canCreate: canCreate,
                session: session))
    }

    /// One sign-in, on its own statement. A clash on a unique index (an account another instance
    /// created for the address a moment ago) runs it again, as a transaction would.
    static func emailLinkSignInOne(_ statement: EmailLinkSignIn, database: PostgresStore) async throws -> EmailLinkSignInOutcome {
        do {
            return try await database.retrying(PostgresStoreError.retriedStates) {
                try await database.withConnection { connection in
                    guard let outcome = try await connection.execute(statement, logger: database.logger).first(where: { _ in true }) else {
                        throw StoreInconsistency(description: "actionlinks_email_link_sign_in returned no row")
                    }
                    return outcome
                }
            }
        } catch let error as PostgresStoreError where error.sqlState == "23505" {
            throw Self.clash(error.constraint) ?? error
        }
    }

    /// The sign-ins of concurrent requests in one statement (`actionlinks_email_link_sign_ins`,
    /// migration v8): one round trip and one commit for all of them, each element handled as
    /// ``emailLinkSignInOne(_:database:)`` handles it, one after the other in one transaction (two
    /// sign-ins with one code: the first signs in, the second finds the code consumed).
    ///
    /// The elements go in order of their code's first hash, then address, so that two batches (of
    /// this instance or another) lock the codes they share in one order. When the database refuses
    /// the statement (it then changed nothing), a deadlock or serialization failure runs it again;
    /// anything else (a unique violation of one element, say) runs each element on its own, so that
    /// each request gets its own outcome. When the outcome is unknown (the connection was lost,
    /// the call ran too long, no connection came), every element gets that error, as a sign-in on
    /// its own statement would: running them again could report a code the batch consumed as invalid.
    static func emailLinkSignInBatch(_ statements: [EmailLinkSignIn], database: PostgresStore) async
        -> [Result<EmailLinkSignInOutcome, any Error>]
    {
        guard statements.count > 1 else {
            return [await result { try await emailLinkSignInOne(statements[0], database: database) }]
        }
        let order = batchOrder(statements)
        let batch = EmailLinkSignIns(statements: order.map { statements[$0] })
        do {
            let rows = try await database.retrying(["40001", "40P01"]) {
                try await database.withConnection { connection in
                    var rows: [(position: Int, outcome: EmailLinkSignInOutcome)] = []
                    for try await row in try await connection.execute(batch, logger: database.logger) { rows.append(row) }
                    return rows
                }
            }
            var outcomes = [Result<EmailLinkSignInOutcome, any Error>?](repeating: nil, count: statements.count)
            for row in rows where (1...order.count).contains(row.position) && outcomes[order[row.position - 1]] == nil {
                outcomes[order[row.position - 1]] = .success(row.outcome)
            }
            let missing = StoreInconsistency(description: "actionlinks_email_link_sign_ins returned no row for a sign-in")
            return outcomes.map { $0 ?? .failure(missing) }
        } catch let error as PostgresStoreError where error.sqlState != nil {
            var outcomes: [Result<EmailLinkSignInOutcome, any Error>] = []
            for statement in statements {
                outcomes.append(await result { try await emailLinkSignInOne(statement, database: database) })
            }
            return outcomes
        } catch {
            return statements.map { _ in .failure(error) }
        }
    }

    /// The order a batch runs `statements` in (their indices): by their code's first hash, then
    /// address, then arrival.
    static func batchOrder(_ statements: [EmailLinkSignIn]) -> [Int] {
        statements.indices.sorted { a, b in
            let (x, y) = (statements[a], statements[b])
            let (p, q) = (x.hashes.first ?? Data(), y.hashes.first ?? Data())
            if p != q { return p.lexicographicallyPrecedes(q) }
            if x.email != y.email { return x.email < y.email }
            return a < b
        }
    }

    /// What `body` returned or threw, as a result.
    static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}

/// `SELECT … FROM actionlinks_email_link_sign_in(…)`: the account's columns by their names, the
/// status (`o_status`), whether the account is new (`o_is_new`), its providers as JSON
/// (`o_identities`) and the code's columns with `code_`.
struct EmailLinkSignIn: PostgresPreparedStatement {
    static let name = "actionlinks_email_link_sign_in_v7"
    /// The columns of the function's row (`r`), as ``decode(_:)`` reads them.
    static let columns = """
        \(PostgresColumns.select(PostgresColumns.accounts, from: "(r.o_account).")), r.o_status, r.o_is_new, r.o_identities,
            \(PostgresColumns.select(PostgresColumns.codes, from: "(r.o_code).", as: "code_"))
        """
    static let sql = "SELECT \(columns) FROM actionlinks_email_link_sign_in($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS r"
    typealias Row = EmailLinkSignInOutcome
    var hashes: [Data]
    var tenantID: String
    var email: String
    var now: Timestamp
    var consumer: String
    var newID: String
    var canCreate: Bool
    var session: Session

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 12)
        bindings.append(hashes.map(PostgresCodeStore.buffer))
        bindings.append(tenantID)
        bindings.append(ActionCodeLink.Mode.signIn.rawValue)
        bindings.append(email)
        bindings.append(now)
        bindings.append(consumer)
        bindings.append(newID)
        bindings.append(canCreate)
        bindings.append(ByteBuffer(bytes: session.hash))
        bindings.append(session.signInProvider)
        bindings.append(session.authTime)
        bindings.append(session.claims)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> EmailLinkSignInOutcome { try Self.decode(row) }

    /// The outcome a row of `actionlinks_email_link_sign_in` (or of `_sign_ins`) describes.
    static func decode(_ row: PostgresRow) throws -> EmailLinkSignInOutcome {
        let named = PostgresNamedRow(row)
        let status = try named("o_status", as: String.self)
        /// The code's mode as this server knows it (`nil`: a mode it does not know, which it takes
        /// for no code at all, as ``PostgresCodeStore/lookup(hashes:now:)`` does).
        func mode() throws -> ActionCodeLink.Mode? { ActionCodeLink.Mode(rawValue: try named("code_mode")) }
        switch status {
        case "invalid": return .invalid
        case "expired": return try mode() == nil ? .invalid : .expired
        case "wrong_mode": return try mode() == nil ? .invalid : .wrongMode
        case "email_mismatch": return .emailMismatch
        case "disabled": return .disabled
        case "admin_only": return .adminOnly
        case "signed_in": break
        default: throw StoreInconsistency(description: "actionlinks_email_link_sign_in answered \(status)")
        }
        var account = try Account(named)
        if let identities = try named("o_identities", as: String?.self) {
            account.federatedIdentities = try JSONDecoder().decode([FederatedIdentity].self, from: Data(identities.utf8))
        }
        guard let record = try CodeRow(named.prefixed("code_")).record else {
            throw StoreInconsistency(description: "a code of an unknown mode was consumed")
        }
        return .signedIn(record: record, account: account, isNew: try named("o_is_new"))
    }
}

/// `SELECT … FROM actionlinks_email_link_sign_ins(…)`: several sign-ins, in the order given; each
/// row is a row of ``EmailLinkSignIn`` followed by the position (from 1) of the sign-in it answers.
struct EmailLinkSignIns: PostgresPreparedStatement {
    static let name = "actionlinks_email_link_sign_ins_v8"
    static let sql = """
        SELECT r.o_position, \(EmailLinkSignIn.columns)
        FROM actionlinks_email_link_sign_ins($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS r
        """
    typealias Row = (position: Int, outcome: EmailLinkSignInOutcome)
    var statements: [EmailLinkSignIn]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(statements.flatMap { $0.hashes.map(PostgresCodeStore.buffer) })
        bindings.append(statements.map { Int32($0.hashes.count) })
        bindings.append(statements.map(\.tenantID))
        bindings.append(ActionCodeLink.Mode.signIn.rawValue)
        bindings.append(statements.map(\.email))
        bindings.append(statements.map(\.now.milliseconds))
        bindings.append(statements.map(\.consumer))
        bindings.append(statements.map(\.newID))
        bindings.append(statements.map(\.canCreate))
        bindings.append(statements.map { ByteBuffer(bytes: $0.session.hash) })
        bindings.append(statements.map(\.session.signInProvider))
        bindings.append(statements.map(\.session.authTime))
        bindings.append(NullableTexts(statements.map(\.session.claims)))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (position: Int, outcome: EmailLinkSignInOutcome) {
        let position = try PostgresNamedRow(row)("o_position", as: Int32.self)
        return (Int(position), try EmailLinkSignIn.decode(row))
    }
}
