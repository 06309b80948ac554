import ActionLinksConfiguration
import Foundation

/// Guesses at a secret (a password, a second factor's code) limited per hour, per account and per
/// client, in the store every instance shares.
///
/// Each attempt is counted as a failure before it is judged, and goes ahead only while the counts
/// are within the limits; the count is taken back when the attempt was not a wrong guess (it
/// succeeded, or the server could not judge it). Concurrent guesses therefore cannot all pass a
/// limit that each read before any was counted: of 24 at once against a limit of 10, 10 are
/// judged and 14 refused (`TOO_MANY_ATTEMPTS_TRY_LATER`).
struct FailedAttempts: Sendable {
    let limits: LimitSettings
    let codes: any CodeStore
    let store: StoreGateway

    /// Runs `attempt` counted under `key` (the account's, limited by
    /// `limits.signInFailuresPerAccountPerHour`) and the client's address (by
    /// `limits.signInFailuresPerIPPerHour`); an error `isWrongGuess` says so stays counted.
    func counting<Value: Sendable>(
        key: String, client: String?, now: Timestamp, isWrongGuess: (ActionError) -> Bool,
        _ attempt: () async throws(ActionError) -> Value
    ) async throws(ActionError) -> Value {
        var keys = [key]
        var maxima = [limits.signInFailuresPerAccountPerHour]
        if let client {
            keys.append("signin-failure:ip:\(limits.clientBucket(client))")
            maxima.append(limits.signInFailuresPerIPPerHour)
        }
        let window = now.roundedDown(to: .seconds(3600))
        let counted = keys
        let counts = try await store.call { try await self.codes.countEvents(keys: counted, windowStart: window) }
        /// The attempt does not count after all (if the store cannot be reached, it stays counted).
        func takeBack() async {
            _ = try? await store.call { try await self.codes.uncountEvents(keys: counted, windowStart: window) }
        }
        if zip(counts, maxima).contains(where: { $0 > $1 }) {
            await takeBack()
            throw ActionError.tooManyAttempts
        }
        do {
            let value = try await attempt()
            await takeBack()
            return value
        } catch {
            if !isWrongGuess(error) { await takeBack() }
            throw error
        }
    }
}
