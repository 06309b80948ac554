import Foundation

/// A test upstream as strict as Google's Identity Toolkit: `actionlinks serve` in production mode
/// (`server.development: false`) for project `demo-actionlinks`, with one API key per platform
/// restricted as Firebase projects restrict theirs, an authorized-domain list (`continueUrls.allow`),
/// no mobile link domain, and Google's Spark quota of 5 sign-in mails a day. A front pointed at it
/// (`upstream.identityToolkitURL`) meets Google's refusals with Google's bodies:
///
/// - a key it does not know: `400 API key not valid. Please pass a valid API key.`;
/// - ``iosKey`` without `X-Ios-Bundle-Identifier: com.example.app`, ``androidKey`` without
///   `X-Android-Package: com.example.app` and `X-Android-Cert: <SHA-1>`, ``webKey`` without a
///   `Referer` on `https://app.example.com` or the link domain: `403 PERMISSION_DENIED` with
///   `API_KEY_IOS_APP_BLOCKED`, `API_KEY_ANDROID_APP_BLOCKED` or `API_KEY_HTTP_REFERRER_BLOCKED`
///   (``headers(for:)`` gives the headers each platform's SDK sends);
/// - a `continueUrl` on a host it does not list: `400 UNAUTHORIZED_DOMAIN`, on every request type and
///   for the admin too; a relative one `INVALID_CONTINUE_URI`; a client's sign-in link without one
///   `MISSING_CONTINUE_URI`; `iOSBundleId` or `androidPackageName`: `DYNAMIC_LINK_NOT_ACTIVATED`;
/// - the sixth sign-in mail of a UTC day: `400 QUOTA_EXCEEDED : Exceeded daily quota for email sign-in.`
///
/// A mailed link carries the key of the client that asked (the admin's carry ``unrestrictedKey``),
/// and its mail is printed on the server's standard output (the `log` backend). The admin credential
/// is ``adminToken``, or an access token from its `/token` (make a service account with
/// `actionlinks service-account --token-uri <base>/token`, as `UpstreamModeTests` does).
///
/// ```swift
/// let upstream = try await StrictUpstream.start()
/// let reply = try await upstream.api("sendOobCode", fields, key: StrictUpstream.iosKey, headers: StrictUpstream.headers(for: StrictUpstream.iosKey))
/// ```
public enum StrictUpstream {
    /// The admin token (`server.adminToken`).
    public static let adminToken = String(repeating: "s", count: 40)
    /// A key with no application restriction (as a Firebase project's auto-created Browser key is
    /// until its owner restricts it): the key links the admin asks for carry.
    public static let unrestrictedKey = "strict-unrestricted-key"
    /// A key restricted to websites: `https://app.example.com/*` and the test link domain.
    public static let webKey = "strict-web-key"
    /// A key restricted to the iOS app ``bundleID``.
    public static let iosKey = "strict-ios-key"
    /// A key restricted to the Android app ``androidPackage`` signed with ``androidSHA1``.
    public static let androidKey = "strict-android-key"
    /// The iOS app's bundle ID.
    public static let bundleID = "com.example.app"
    /// The Android app's package name.
    public static let androidPackage = "com.example.app"
    /// The Android app's signing certificate's SHA-1, as `keytool` prints it.
    public static let androidSHA1 = "DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09"
    /// The page a browser calls from (an allowed referrer and an authorized domain).
    public static let webOrigin = "https://app.example.com"

    /// What the strict upstream is configured with.
    public struct Options: Sendable {
        /// `continueUrls.allow`: the project's authorized domains.
        public var authorizedDomains = [
            "app.example.com", "http://localhost", "demo-actionlinks.firebaseapp.com", "demo-actionlinks.web.app",
        ]
        /// `limits.dailyQuotas` (mailed links per UTC day, by mode).
        public var dailyQuotas: [String: Int] = ["signIn": 5]
        /// `limits.dailyLinkQuotas` (links returned to the admin per UTC day, by mode).
        public var dailyLinkQuotas: [String: Int] = [:]
        /// `project.mobileLinkDomain` (`none`: `iOSBundleId` and `androidPackageName` are refused).
        public var mobileLinkDomain = "none"

        public init() {}
    }

    /// The configuration file of a strict upstream with `options`, written into a new folder of the
    /// test scratch folder; `TestApp` and `TestServer` both run it.
    public static func configFile(_ options: Options = Options()) throws -> URL {
        let folder = TestProject.temporaryDirectory("strict-upstream-config")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func mapping(_ values: [String: Int]) -> String {
            "{" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
        let yaml = """
            server:
              host: 127.0.0.1
              port: 8080
              development: false
              adminToken: \(adminToken)
            project:
              id: \(TestProject.id)
              appName: Strict Upstream
              mobileLinkDomain: \(options.mobileLinkDomain)
              apiKeys:
                - key: \(unrestrictedKey)
                - key: \(webKey)
                  httpReferrers: ["\(webOrigin.dropFirst("https://".count))/*", "links.test.example/*"]
                - key: \(iosKey)
                  iosBundleIds: [\(bundleID)]
                - key: \(androidKey)
                  androidApps:
                    - {packageName: \(androidPackage), sha1: "\(androidSHA1)"}
            linkDomains: [links.test.example]
            mail:
              backend: log
              from: Strict Upstream <noreply@links.test.example>
            limits:
              dailyQuotas: \(mapping(options.dailyQuotas))
              dailyLinkQuotas: \(mapping(options.dailyLinkQuotas))
            continueUrls:
              allow: [\(options.authorizedDomains.map { "\"\($0)\"" }.joined(separator: ", "))]

            """
        let file = folder.appendingPathComponent("strict-upstream.yaml")
        try Data(yaml.utf8).write(to: file)
        return file
    }

    /// Starts the real binary as a strict upstream; `environment` adds overrides (such as
    /// `ACTIONLINKS_LINK_DOMAINS` for a front's domain).
    public static func start(_ options: Options = Options(), environment: [String: String] = [:]) async throws -> TestServer {
        try await TestServer(environment: environment, config: try configFile(options).path, credentials: credentials)
    }

    /// What the REST helpers use with a strict upstream: ``unrestrictedKey`` and ``adminToken``.
    public static let credentials = TestCredentials(apiKey: unrestrictedKey, adminToken: adminToken)

    /// The headers the SDK of `key`'s platform sends with it, so the request satisfies the key's
    /// restriction: the iOS SDK's bundle ID, the Android SDK's package and certificate, a browser's
    /// `Referer` (the origin only, as browsers send it cross-origin); none for ``unrestrictedKey``.
    public static func headers(for key: String) -> [String: String] {
        switch key {
        case iosKey: ["X-Ios-Bundle-Identifier": bundleID]
        case androidKey: ["X-Android-Package": androidPackage, "X-Android-Cert": androidSHA1.replacingOccurrences(of: ":", with: "")]
        case webKey: ["Referer": webOrigin + "/"]
        default: [:]
        }
    }
}
