import ActionLinks
import Foundation
import NIOCore
import PostgresNIO

/// What `actionlinks_email_link_sign_in` (migration v7) did with a code.
enum EmailLinkSignInOutcome: Sendable {
    /// The code was consumed, the account signed in (created when `isNew`) and the session added.
    case signedIn(record: ActionCodeRecord, account: Account, isNew: Bool)
    /// No such code, or consumed, retired, of another tenant, or of a mode this server does not
    /// know: nothing changed.
    case invalid
    /// The code expired: nothing changed.
    case expired
    /// A live code of this tenant but of another mode: nothing changed.
    case wrongMode
    /// The code was sent to another address: nothing changed.
    case emailMismatch
    /// The address's account is disabled: nothing changed.
    case disabled
    /// The address has no account and sign-up is off: nothing changed.
    case adminOnly
}

extension PostgresAccountStore {
    /// An email-link sign-in without a signed-in user in one statement, so one round trip and one
    /// atomic commit: the function `actionlinks_email_link_sign_in` locks the code (then the
    /// account), and either refuses without changing anything or consumes the code, signs in or
    /// creates the account and adds `session` (whose `accountID` it replaces with the account's).
    /// ``ActionCompleter/signIn(code:email:user:tenant:consumer:)`` takes this path on PostgreSQL; it
    /// does what its unit of work does on the other stores. A clash on a unique index (an account
    /// another instance created for the address a moment ago) runs it again, as a transaction would.
    func emailLinkSignIn(
        hashes: [Data], tenantID: String, email: String, now: Timestamp, consumer: String, newID: String, canCreate: Bool,
        session: Session
    ) async throws -> EmailLinkSignInOutcome {
        guard !hashes.isEmpty else { return .invalid }
        let database = database
        let statement = EmailLinkSignIn(
            hashes: hashes, tenantID: tenantID, email: email, now: now, consumer: consumer, newID: newID, canCreate: canCreate,
            session: session)
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
}

/// `SELECT … FROM actionlinks_email_link_sign_in(…)`: the account's columns first (so that
/// ``accountFromRow(_:)`` reads them where it always does), then the status, whether the account is
/// new, its providers (JSON) and the code's columns.
struct EmailLinkSignIn: PostgresPreparedStatement {
    static let name = "actionlinks_email_link_sign_in_v7"
    static let accountColumnCount = accountColumns().split(separator: ",").count
    static let sql = """
        SELECT \(accountColumns(prefix: "(r.o_account).")), r.o_status, r.o_is_new, r.o_identities,
            \(codeColumns.split(separator: ",").map { "(r.o_code)." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
        FROM actionlinks_email_link_sign_in($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS r
        """
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

    func decodeRow(_ row: PostgresRow) throws -> EmailLinkSignInOutcome {
        let cells = row.makeRandomAccess()
        let at = Self.accountColumnCount
        let status = try cells[at].decode(String.self)
        /// The code's mode as this server knows it (`nil`: a mode it does not know, which it takes
        /// for no code at all, as ``PostgresCodeStore/lookup(hashes:now:)`` does).
        func mode() throws -> ActionCodeLink.Mode? { ActionCodeLink.Mode(rawValue: try cells[at + 4].decode(String.self)) }
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
        var account = try accountFromRow(row)
        if let identities = try cells[at + 2].decode(String?.self) {
            account.federatedIdentities = try JSONDecoder().decode([FederatedIdentity].self, from: Data(identities.utf8))
        }
        let code = at + 3
        guard let mode = ActionCodeLink.Mode(rawValue: try cells[code + 1].decode(String.self)) else {
            throw StoreInconsistency(description: "a code of an unknown mode was consumed")
        }
        let record = ActionCodeRecord(
            hash: Data(try cells[code].decode(ByteBuffer.self).readableBytesView), mode: mode,
            tenantID: try cells[code + 2].decode(String.self),
            accountID: try cells[code + 3].decode(String?.self), email: try cells[code + 4].decode(String.self),
            newEmail: try cells[code + 5].decode(String?.self), continueURL: try cells[code + 6].decode(String?.self),
            languageCode: try cells[code + 7].decode(String?.self), appSettings: try cells[code + 8].decode(String?.self),
            createdAt: try cells[code + 9].decode(Timestamp.self), expiresAt: try cells[code + 10].decode(Timestamp.self),
            consumedAt: try cells[code + 11].decode(Timestamp?.self), consumedBy: try cells[code + 12].decode(String?.self))
        return .signedIn(record: record, account: account, isNew: try cells[at + 1].decode(Bool.self))
    }
}
