import ActionLinksDomain
import Foundation

/// `signInCodes:exchange`: a sign-in code typed into the app that asked for the link, exchanged for
/// the link exactly as mailed (``SignInCodes``). The app then signs in with its own SDK's
/// `signInWithEmailLink(email, emailLink)`. Not a Firebase operation: this server's own, under the
/// same API key, CORS and tenants as the rest of the REST API.
extension IdentityToolkitAPI {
    mutating func addSignInCodeOperations(_ services: LinkDomainServices) {
        let signInCodes = services.signInCodes

        add("exchange", on: .signInCodes, requires: [.enabledTenant, .jsonBody], body: SignInCodeExchangeRequest.self) {
            fields, call, tenant throws(ActionError) in
            let exchange = try await signInCodes.exchange(
                email: fields.email, code: fields.code, tenant: tenant, clientAddress: call.caller.clientAddress)
            return SignInCodeExchangeResponse(emailLink: exchange.emailLink, email: exchange.email)
        }
    }
}

/// `signInCodes:exchange`: `{"email", "code", "tenantId"?}`.
struct SignInCodeExchangeRequest: Decodable, Sendable, NamesTenant {
    var email: String?
    /// The code as typed (spaces, dashes and any script's digits are fine).
    var code: String?
    var tenantId: String?
}

/// `signInCodes:exchange`'s answer.
struct SignInCodeExchangeResponse: Encodable, Sendable {
    /// The link exactly as it was mailed, for `signInWithEmailLink`.
    var emailLink: String
    /// The canonical address it was sent to.
    var email: String
}
