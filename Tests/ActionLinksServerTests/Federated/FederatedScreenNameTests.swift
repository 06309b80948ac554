import ActionLinks
import ActionLinksTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A provider's `screen_name` claim, as Firebase's Auth emulator treats it (`operations.ts`,
/// `idp.spec.ts` "should copy attributes to user on IDP sign-up"): `screenName` in the
/// `signInWithIdp` answer, on the user at sign-up and on the provider's `providerUserInfo`, kept
/// by both stores (schema v6).
@Suite("Federated sign-in: screen_name becomes screenName", .timeLimit(.minutes(5)))
struct FederatedScreenNameTests {
    typealias App = FederatedApp

    /// An iOS round trip as `sub`, `signInWithIdp` with its link (which must succeed), and
    /// `accounts:lookup` of the user it signed in.
    static func signInAndLookUp(_ client: any HTTPTarget, sub: String) async throws -> (
        signIn: [String: Any], user: [String: Any]
    ) {
        let session = App.session()
        let trip = try await App.iOSTrip(client, provider: "oidc.mock", sub: sub, sessionHash: session.hash)
        let appURL = try #require(trip.appURL)
        let link = try #require(App.link(in: appURL).link)
        let (status, json) = try await App.signInWithIdp(
            client, ["requestUri": link, "sessionId": session.secret, "returnSecureToken": true])
        #expect(status == 200, "\(json)")
        let idToken = try #require(json["idToken"] as? String, "\(json)")
        let (_, lookup) = try await App.post(client, "/v1/accounts:lookup?key=demo-api-key", ["idToken": idToken])
        return (json, try #require((lookup["users"] as? [[String: Any]])?.first, "\(lookup)"))
    }

    @Test(
        "screen_name is answered, copied to the new user and its providerUserInfo, and read back by accounts:lookup",
        arguments: FederatedApp.stores)
    func screenName(store: String) async throws {
        let sub = try await App.subject(["email": "alan@example.com", "screen_name": "turingcomplete", "name": "Alan Turing"])
        try await App.test(store: store) { client in
            let (json, user) = try await Self.signInAndLookUp(client, sub: sub)
            #expect(json["screenName"] as? String == "turingcomplete", "\(json)")
            #expect(user["screenName"] as? String == "turingcomplete", "\(user)")
            #expect(user["displayName"] as? String == "Alan Turing")
            let providers = try #require(user["providerUserInfo"] as? [[String: Any]])
            #expect(providers.count == 1 && providers.first?["providerId"] as? String == "oidc.mock")
            #expect(providers.first?["screenName"] as? String == "turingcomplete", "\(providers)")
        }
    }

    @Test("without the claim there is no screenName anywhere")
    func none() async throws {
        let sub = try await App.subject(["email": "grace@example.com"])
        try await App.test { client in
            let (json, user) = try await Self.signInAndLookUp(client, sub: sub)
            #expect(json["screenName"] == nil, "\(json)")
            #expect(user["screenName"] == nil && (user["providerUserInfo"] as? [[String: Any]])?.first?["screenName"] == nil)
        }
    }
}
