import ActionLinksDomain
import Crypto
import Hummingbird

/// The cookie that lets a browser which already proved an address sign in with that address's next
/// link without typing it again (Firebase's web SDK keeps the address in local storage for the same
/// reason). It is a ``SignedToken`` bound to the tenant and the address, never the address itself.
struct RememberedDevice: Sendable {
    static let cookieName = "actionlinks_device"

    let tokens: SignedToken

    init(formKey: SymmetricKey) {
        tokens = SignedToken(.rememberedDevice, formKey: formKey)
    }

    /// Whether `request` carries a device cookie for `email` in `tenantID`, valid at `now`.
    func isRemembered(_ request: Request, email: String, tenantID: String, now: Timestamp) -> Bool {
        guard let value = request.cookies[Self.cookieName]?.value else { return false }
        return tokens.verify(value, bound: [tenantID, email], now: now) != nil
    }

    /// `HttpOnly`, only for `/__/auth/`, `SameSite=Lax` (sent when a link is tapped in a webmail),
    /// `Secure` unless the server itself is a plain-HTTP development server on loopback.
    func cookie(email: String, tenantID: String, secure: Bool, now: Timestamp) -> Cookie {
        Cookie(
            name: Self.cookieName, value: tokens.make(bound: [tenantID, email], now: now),
            maxAge: Int(SignedToken.Purpose.rememberedDevice.lifetime), path: "/__/auth/", secure: secure, httpOnly: true,
            sameSite: .lax)
    }
}
