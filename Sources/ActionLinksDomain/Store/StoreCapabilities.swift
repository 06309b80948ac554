import Foundation

// What some stores can do besides their protocol. A store adopts a capability when it can; the
// services ask for it once, when they are made (`store as? any Capability`), and hold the
// capability, never a store's concrete type. Each capability does what the plain protocol's calls
// would do, only faster on that store; without it the services take the plain path.

/// A code store whose lookups answer on the caller's thread without suspending: a read that takes
/// microseconds and never waits for a writer (an embedded database read in WAL mode). The landing
/// page's fast path reads codes this way on the event loop. A store whose reads cross a network
/// must not adopt it.
package protocol ImmediateCodeLookup: Sendable {
    /// ``CodeStore/lookup(hashes:now:)`` on the caller's thread.
    func lookupNow(hashes: [Data], now: Timestamp) throws -> CodeLookup
}

/// An account store whose session reads answer on the caller's thread without suspending (see
/// ``ImmediateCodeLookup``). The token refresh's fast path reads sessions this way.
package protocol ImmediateSessionLookup: Sendable {
    /// ``AccountStore/session(hash:)`` on the caller's thread.
    func sessionNow(hash: Data) throws -> (session: Session, account: Account)?
}

/// A code store that looks the address's account up in the write that stores a code: one trip to
/// the store's writer instead of a read and then the write.
package protocol AccountLookupWhileIssuing: Sendable {
    /// Looks up the account whose own address is `email` (in the record's tenant) and, in the same
    /// write, stores the record for it (its `accountID` set to that account's, or `nil`) when
    /// `decide` allows: `decide` is given the account's ID and returns what the caller makes of it,
    /// or throws to store nothing. The record retires the live codes of its address and mode, as
    /// ``CodeStore/issue(_:)`` does.
    func issue<T: Sendable>(
        _ record: ActionCodeRecord, accountOf email: String, _ decide: @escaping @Sendable (String?) throws -> T
    ) async throws -> T
}

/// An account store that completes an email-link sign-in without a signed-in user in one
/// statement: the checks and the changes of ``ActionCompleter/signIn(code:email:user:tenant:consumer:)``'s
/// unit of work, in their order, in one round trip and one atomic commit.
package protocol OneStatementEmailLinkSignIn: Sendable {
    /// Locks the code (then the account) and either refuses without changing anything or consumes
    /// the code, signs in or creates the account (`newID`, when `canCreate`) and adds `session`
    /// (whose `accountID` it replaces with the account's).
    func emailLinkSignIn(
        hashes: [Data], tenantID: String, email: String, now: Timestamp, consumer: String, newID: String, canCreate: Bool,
        session: Session
    ) async throws -> EmailLinkSignInOutcome
}

/// What a one-statement email-link sign-in (``OneStatementEmailLinkSignIn``) did with a code.
package enum EmailLinkSignInOutcome: Sendable {
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
