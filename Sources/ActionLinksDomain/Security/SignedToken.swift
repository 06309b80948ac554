import ActionLinks
import Crypto
import Foundation

/// A value this server hands out and later takes back without storing it: a form token, a
/// remembered-device cookie, a reset offer, a federated pending token.
///
/// `<expiry>.<MAC>`, or `<expiry>.<payload>.<MAC>` when it carries data, where the expiry is in
/// seconds since 1970, the payload is base64url, and the MAC is HMAC-SHA-256 under a key of the
/// token's own ``Purpose`` (derived from the form key, so that a token of one purpose never passes
/// for another's) over the expiry, the payload and the values the token is *bound* to. Those values
/// (a code, a mode, an address, a tenant) are never in the token: a token is only valid for the
/// same values.
///
/// The server checks the expiry itself, whatever a browser does with a cookie's `Max-Age`, and
/// refuses an expiry further away than the purpose's lifetime (plus a minute for clocks of other
/// instances), so a token cannot be made to live longer than its purpose allows.
package struct SignedToken: Sendable {
    /// What a token is for: each has its own key and lifetime.
    package enum Purpose: String, Sendable, CaseIterable {
        /// Ties an action form to its code and mode (an hour).
        case form = "action form"
        /// A browser that proved an address (30 days).
        case rememberedDevice = "remembered device"
        /// Upstream mode's password-reset offer after an address is recovered (an hour).
        case resetOffer = "reset offer"
        /// A federated assertion an app may present again (an hour).
        case pendingAssertion = "federated pending token"

        /// How long a token of this purpose stays valid, in seconds.
        package var lifetime: Int64 {
            switch self {
            case .rememberedDevice: 30 * 86_400
            case .form, .resetOffer, .pendingAssertion: 3600
            }
        }
    }

    /// How far ahead of this server's clock another instance's may be.
    static let clockSkew: Int64 = 60

    let purpose: Purpose
    /// HMAC-SHA-256 under the purpose's key, with the key already absorbed: each MAC starts from a
    /// copy (every landing page makes a form token).
    private let keyed: HMAC<SHA256>

    package init(_ purpose: Purpose, formKey: SymmetricKey) {
        self.purpose = purpose
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: formKey, info: Data(("actionlinks signed token: " + purpose.rawValue).utf8), outputByteCount: 32)
        keyed = HMAC<SHA256>(key: key)
    }

    /// A token bound to `binding`, carrying `payload` if given, valid for the purpose's lifetime
    /// from `now`.
    package func make(bound binding: [String], payload: Data? = nil, now: Timestamp) -> String {
        let expires = String(now.seconds + purpose.lifetime)
        let carried = payload.map { Base64URL.encode($0) }
        let signed = carried.map { expires + "." + $0 } ?? expires
        return signed + "." + Base64URL.encode(mac(signed, binding))
    }

    /// The payload (empty when the token carries none) if `token` is one of this purpose's, bound to
    /// `binding`, and not expired at `now`; `nil` otherwise.
    package func verify(_ token: some StringProtocol, bound binding: [String], now: Timestamp) -> Data? {
        guard token.utf8.count <= 8192, let dot = token.lastIndex(of: ".") else { return nil }
        let signed = token[..<dot]
        let parts = signed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        // The expiry is the client's number: compared without arithmetic on it (no overflow).
        guard parts[0].utf8.count <= 12, let expires = Int64(parts[0]) else { return nil }
        let seconds = now.seconds
        // The MAC is compared as text: a base64url spelling of it is accepted only in its one canonical form.
        guard expires > seconds, expires <= seconds + purpose.lifetime + Self.clockSkew,
            ConstantTime.equal(Array(token[token.index(after: dot)...].utf8), Array(Base64URL.encode(mac(String(signed), binding)).utf8))
        else { return nil }
        guard parts.count == 2 else { return Data() }
        return Base64URL.decode(parts[1])
    }

    /// The MAC over the signed part and each bound value, each preceded by its length (so that no
    /// two different lists of values sign the same bytes). The bytes are gathered first and given
    /// to the MAC in one update: each `update(data:)` walks its argument's regions through generic
    /// code, which cost more than the hashing (every landing page makes a form token).
    private func mac(_ signed: String, _ binding: [String]) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(binding.reduce(signed.utf8.count) { $0 + $1.utf8.count + 22 })
        message.append(contentsOf: signed.utf8)
        for value in binding {
            message.append(UInt8(ascii: "|"))
            message.append(contentsOf: String(value.utf8.count).utf8)
            message.append(UInt8(ascii: ":"))
            message.append(contentsOf: value.utf8)
        }
        var mac = keyed
        mac.update(data: message)
        return mac.finalize().withUnsafeBytes { Array($0) }
    }
}
