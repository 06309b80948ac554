import ActionLinks
import Foundation

// The provider's return to `/__/auth/handler`, checked against its flow.

extension FederatedSignInService {
    /// Where the handler sends the browser once the provider has answered.
    package enum Return: Sendable {
        /// Back to an app with the URL as received (its `link`).
        case app(FederatedFlow, link: String)
        /// Back to an app with an error (`firebaseError`).
        case appError(FederatedFlow, code: String, message: String)
        /// To a URL (a `createAuthUri` client's `continueUri`, or a web page with its token).
        case redirect(String)
    }

    /// Checks the provider's answer against its flow: the flow must exist, be live, unused, not
    /// returned before, bound to this browser (`binding`, the cookie) unless `createAuthUri` made it,
    /// and `iss`, when given, must be the provider's. Any failure throws (the handler shows an error
    /// page: nothing identifies an app to return to that the request did not choose). `query` is the
    /// answer as received (the query, or a `form_post` body): the app's `link` is the redirect URI
    /// with it.
    package func providerReturned(parameters: [String: String], query: String, binding: String?) async throws(ActionError) -> Return {
        if parameters["SAMLResponse"] != nil { return try await samlReturned(parameters: parameters, query: query, binding: binding) }
        guard let state = parameters["state"], !state.isEmpty else {
            throw ActionError(.invalidIDPResponse, "the provider's answer has no state")
        }
        let flow = try await flows.returning(state: state, binding: binding, unknown: "no sign-in was started with this state") { _ in true
        }
        if let provider = settings.providers.first(where: { $0.id == flow.providerID }) {
            // RFC 9207: a mix-up attack shows as an answer from an issuer other than the flow's.
            if let issuer = parameters["iss"], issuer != provider.issuer {
                throw ActionError(.invalidIDPResponse, "the answer comes from another issuer")
            }
            if parameters["iss"] == nil,
                (try? await providers.configuration(for: provider))?.authorizationResponseIssParameterSupported == true
            {
                throw ActionError(.invalidIDPResponse, "the answer lacks the issuer the provider always sends")
            }
        }
        let code = parameters["code"].flatMap { $0.isEmpty ? nil : $0 }
        try await flows.markReturned(flow, answer: code)
        let refusal = parameters["error"].map { error in
            (
                code: error == "access_denied" ? "auth/user-cancelled" : "auth/invalid-credential",
                message: "The provider answered \(error.prefix(64))"
                    + (parameters["error_description"].map { ": " + String($0.prefix(200)) } ?? "")
            )
        }
        switch flow.kind {
        case .iOSApp, .androidApp:
            if let refusal { return .appError(flow, code: refusal.code, message: refusal.message) }
            guard code != nil else { return .appError(flow, code: "auth/invalid-credential", message: "The provider sent no code.") }
            return .app(flow, link: flow.redirectURI + "?" + query)
        case .authURI:
            let relayed = ["code", "state", "iss", "error", "error_description"].compactMap { name in parameters[name].map { (name, $0) } }
            return .redirect(URLText.url(flow.returnTo, adding: relayed))
        case .webPage:
            return .redirect(await completeWebPage(flow, code: code, refusal: refusal?.code))
        }
    }
}
