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

/// A code store that makes all of a link's writes in one call, in a batch with concurrent
/// requests' (group commit): the send limits' and quota's counts, the address's account looked up,
/// the code stored, and the sign-in code beside it. A store with one writer makes them one
/// transaction of it; a shared one may count and look up first, then store the code and its
/// sign-in code in one batched statement. One trip to the store instead of three or four calls in
/// a row, and one commit for the code and its sign-in code. The store answers through a
/// completion, so a caller on an event loop waits for nothing
/// (``CodeIssuer/issueNow(_:caller:tenant:completion:)``).
package protocol LinkIssuingInOneWrite: Sendable {
    /// Makes `write` and tells `completion` its outcome once the code's batch has committed, or
    /// the write failed: then no code was stored (in one transaction nothing of it was written;
    /// counted first, what the stages counted stays counted, as separate calls leave it). A store
    /// with one writer tells it on the writer's thread, before its next batch starts: a completion
    /// only hands the outcome on.
    func issueLink(_ write: LinkIssueWrite, completion: @escaping @Sendable (Result<LinkIssueWrite.Outcome, any Error>) -> Void)
}

/// The writes of one link, in the order a store with ``LinkIssuingInOneWrite`` makes them; each
/// step as the plain calls make it (``CodeStore/countEvents(keys:windowStart:)``,
/// ``AccountStore/account(email:tenantID:)``, ``CodeStore/issue(_:)``, ``SignInCodeStore/issue(_:)``).
package struct LinkIssueWrite: Sendable {
    /// Counts checked together (``EventLimitStage``).
    package typealias Stage = EventLimitStage

    /// What came of the write.
    package enum Outcome: Sendable {
        /// The counts of `stage` (an index into ``stages``) went over a limit: the counts so far
        /// stay counted, nothing else was written.
        case overLimit(stage: Int)
        /// ``decide`` refused the code: the counts stay counted, nothing else was written.
        case refused(ActionError)
        /// The code (and the sign-in code) were stored; `deliver` is what ``decide`` answered.
        case stored(deliver: Bool)
    }

    /// Counted and checked in order; the first stage over a limit ends the write.
    package var stages: [Stage]
    /// The code to store. Its `accountID` is replaced by the account looked up, when one is.
    package var record: ActionCodeRecord
    /// Whether the account whose own address is the record's `email` (in its tenant) is looked up.
    package var looksUpAccount: Bool
    /// Given the account's ID (the one looked up, else the record's), whether the link goes out,
    /// or the refusal (then nothing is stored).
    package var decide: @Sendable (_ accountID: String?) -> Result<Bool, ActionError>
    /// The sign-in code stored with the code, replacing the address's (``SignInCodeStore/issue(_:)``).
    package var signInCode: SignInCodeRecord?
    /// The link's mail, stored with the code when ``decide`` answers that the link goes out
    /// (``MailOutboxStore/enqueue(_:)``), so that no link is answered without its mail stored.
    package var mail: OutboxMail?

    /// Makes the value from each of its fields.
    package init(
        stages: [Stage], record: ActionCodeRecord, looksUpAccount: Bool, decide: @escaping @Sendable (String?) -> Result<Bool, ActionError>,
        signInCode: SignInCodeRecord?, mail: OutboxMail? = nil
    ) {
        self.stages = stages
        self.record = record
        self.looksUpAccount = looksUpAccount
        self.decide = decide
        self.signInCode = signInCode
        self.mail = mail
    }
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
