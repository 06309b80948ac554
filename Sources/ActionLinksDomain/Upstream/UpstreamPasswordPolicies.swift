import ActionLinksConfiguration
import Synchronization

/// The fronted project's password policies, as its reset form states and checks them: read from
/// upstream (`GET /v2/passwordPolicy` with the link's API key and tenant) and kept for
/// ``lifetime`` per (API key, tenant), so a page costs no extra call while the policy is fresh.
///
/// The policy a page gets is the one upstream enforces (``PasswordPolicyResponse/enforcedPolicy``:
/// its rules with `ENFORCE`, else Firebase's floor of 6 characters). When upstream does not
/// answer, or refuses the call, the page gets the floor and nothing is kept: upstream's own answer
/// to the new password is what counts, and the form maps it.
package final class UpstreamPasswordPolicies: Sendable {
    let upstream: UpstreamClient
    let clock: any ServiceClock
    /// How long a policy read from upstream is used before it is read again.
    static let lifetime = Duration.seconds(300)
    /// At most this many (key, tenant) pairs are kept; the link's tenant is the caller's choice.
    static let capacity = 256

    private struct Key: Hashable {
        var apiKey: String
        var tenantID: String
    }

    private let kept = Mutex<[Key: (policy: PasswordPolicy, until: Timestamp)]>([:])

    package init(upstream: UpstreamClient, clock: any ServiceClock) {
        self.upstream = upstream
        self.clock = clock
    }

    /// The policy upstream enforces for `tenantID` ("" or nil: the project), as `apiKey` reads it.
    package func policy(apiKey: String, tenantID: String?) async -> PasswordPolicy {
        let key = Key(apiKey: apiKey, tenantID: tenantID ?? "")
        let now = clock.now
        if let entry = kept.withLock({ $0[key] }), now < entry.until { return entry.policy }
        let policy: PasswordPolicy
        do throws(ActionError) {
            policy = try await upstream.passwordPolicy(apiKey: apiKey, tenantID: tenantID).enforcedPolicy
        } catch {
            return PasswordPolicyResponse.floorPolicy
        }
        kept.withLock { kept in
            if kept.count >= Self.capacity, kept[key] == nil {
                kept = kept.filter { now < $0.value.until }
                if kept.count >= Self.capacity { kept.removeAll() }
            }
            kept[key] = (policy, now + Self.lifetime)
        }
        return policy
    }
}
