import ActionLinks
import ActionLinksDomain
import Foundation
import HTTPTypes
import Hummingbird

/// The Firebase Android SDK's side of `/__/auth/handler`.
///
/// `GenericIdpActivity` opens the handler with `eid=p`, `v=X<version>`, `authType`, `apiKey`,
/// `providerId`, `sessionId`, `eventId` (a UUID), `apn` (its package), `sha1Cert` (the lower-case
/// hex SHA-1 of its signing certificate), `publicKey` (a Tink ECIES public keyset, base64url) and
/// optionally `scopes`, `customParameters` and `tid`. The answer goes back as an intent for
/// `genericidp://firebase.auth/` in that package, with the extras it reads: `link` (the provider's
/// answer, encrypted to `publicKey`; `encryptionEnabled` says so) and `eventId`, or `firebaseError`.
///
/// Only a package configured in `apps.android` whose `sha1CertFingerprints` hold the certificate
/// gets a flow; the intent's package comes from the configuration, never from the request.
extension FederatedHandlerRoutes {
    struct AndroidStart {
        var package: String
        var sessionHash: String
        var publicKey: String
    }

    enum AndroidRefusal: Error {
        /// A parameter is missing or malformed.
        case incomplete
        /// The package is not configured, or not with this certificate.
        case unregisteredApp
    }

    /// Checks an Android start: the package and certificate against `apps.android`, the session
    /// ID, the event ID and the public key (which must be one this server can encrypt to).
    ///
    /// Unlike iOS, which sends the handler the SHA-256 of a secret and `signInWithIdp` the secret,
    /// the Android SDK sends both the same `sessionId` (the 32 bytes of a SHA-256 read as a Java
    /// string, so mostly U+FFFD; newer versions hide how it is made), keeping it in its
    /// preferences under the event ID. The flow keeps its hash, which `signInWithIdp` checks as
    /// for iOS; what ties the answer to the app here is the `link` being readable only with the
    /// app's private key.
    func androidStart(_ query: [String: String], package: String) -> Result<AndroidStart, AndroidRefusal> {
        guard query["eventId"] != nil, let sessionID = query["sessionId"], (1...256).contains(sessionID.utf8.count),
            let certificate = query["sha1Cert"].flatMap(Self.sha1Hex),
            let publicKey = query["publicKey"], (try? TinkHybridEncrypt(keyset: publicKey)) != nil
        else { return .failure(.incomplete) }
        let registered = services.apps.androidApps.contains { app in
            app.packageName == package
                && app.sha1Fingerprints.contains {
                    Self.sha1Hex($0).map { ConstantTime.equal(Array($0.utf8), Array(certificate.utf8)) } ?? false
                }
        }
        guard registered else { return .failure(.unregisteredApp) }
        return .success(AndroidStart(package: package, sessionHash: FederatedFlow.hash(sessionID), publicKey: publicKey))
    }

    /// The error page for a refused Android start: one that names the cause when the app is not
    /// registered (the developer's first sign of a missing `sha1CertFingerprints`).
    func androidErrorPage(_ request: Request, language: String?, refusal: AndroidRefusal) -> Response {
        guard refusal == .unregisteredApp else { return errorPage(request, language: language) }
        let pageLanguage = pages.templates.language(requested: language, acceptLanguage: request.headers[.acceptLanguage])
        return pages.result(
            status: .badRequest, language: pageLanguage, title: "federated.error.title", body: "federated.android.unregistered",
            values: ["appName": services.settings.project.appName])
    }

    /// Back to the Android app: an intent behind a button (browsers open intents on a tap), with
    /// `link` encrypted to the app's public key.
    func androidReturn(_ flow: FederatedFlow, items: [(String, String)], request: Request, language: String?) -> Response {
        var extras: [(String, String)] = []
        var encrypted = false
        for (name, value) in items {
            if name == "link" {
                guard let keyset = flow.androidPublicKey, let encrypter = try? TinkHybridEncrypt(keyset: keyset),
                    let ciphertext = try? encrypter.encrypt(Array(value.utf8))
                else { return errorPage(request, language: language) }
                extras.append((name, ciphertext))
                encrypted = true
            } else {
                extras.append((name, value))
            }
        }
        var intent = "intent://firebase.auth/#Intent;scheme=genericidp;package=\(flow.returnTo);"
        for (name, value) in extras { intent += "S.\(name)=\(PercentEncoding.encodeComponent(value));" }
        intent += "B.encryptionEnabled=\(encrypted);end"
        let pageLanguage = pages.templates.language(requested: language, acceptLanguage: request.headers[.acceptLanguage])
        return pages.result(
            status: .ok, language: pageLanguage, title: "federated.return.title", body: "federated.return.body",
            values: ["appName": services.settings.project.appName],
            continueLink: (intent, pages.templates.text("federated.return.button", pageLanguage)))
    }

    /// The 40 lower-case hex digits of a SHA-1 fingerprint (`sha1Cert` as the SDK sends it, or
    /// `AB:CD:...` as configured); `nil` for anything else.
    static func sha1Hex(_ text: String) -> String? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: ":") }
        guard digits.count == 40, digits.allSatisfy({ isHexByte($0) }) else { return nil }
        return String(decoding: digits, as: UTF8.self).lowercased()
    }
}
