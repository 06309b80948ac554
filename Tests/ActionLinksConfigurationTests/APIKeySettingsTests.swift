import ActionLinks
import Testing

@testable import ActionLinksConfiguration

/// `project.apiKey`, `project.apiKeys` (keys with Google's application restrictions),
/// `project.mobileLinkDomain` and the daily quotas of `limits`.
extension ServiceSectionTests {
    static let keys = """
        project:
          apiKey: plain-key
          apiKeys:
            - key: ios-key
              iosBundleIds: [com.example.app, com.example.app.beta]
            - key: android-key
              androidApps:
                - packageName: com.example.app
                  sha1: "DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09"
            - key: web-key
              httpReferrers: ["https://app.example.com/*", "*.example.org"]
            - key: server-key

        """

    @Test("project.apiKey alone is one unrestricted key, demo-api-key by default; apiKeys add keys with restrictions")
    func apiKeys() throws {
        #expect(try parse("").project.apiKeys == [APIKey("demo-api-key")])
        #expect(try parse("project:\n  apiKey: k1\n").project.apiKeys == [APIKey("k1")])
        let project = try parse(Self.keys).project
        #expect(project.apiKeys.map(\.key) == ["plain-key", "ios-key", "android-key", "web-key", "server-key"])
        #expect(project.apiKeys[1].restriction == .iosApps(["com.example.app", "com.example.app.beta"]))
        #expect(
            project.apiKeys[2].restriction
                == .androidApps([APIKey.AndroidApp(packageName: "com.example.app", sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709")]))
        #expect(
            project.apiKeys[3].restriction
                == .httpReferrers([try HTTPReferrerPattern("https://app.example.com/*"), try HTTPReferrerPattern("*.example.org")]))
        #expect(project.apiKeys[4].restriction == .none && project.apiKey == "plain-key")
        // Without project.apiKey only the listed keys count (no demo key beside restricted ones);
        // links the admin asks for carry the first unrestricted key, else the first.
        let listed = try parse("project:\n  apiKeys:\n    - {key: ios, iosBundleIds: [com.x]}\n    - {key: open}\n").project
        #expect(listed.apiKeys.map(\.key) == ["ios", "open"] && listed.apiKey == "open")
        #expect(try parse("project:\n  apiKeys:\n    - {key: ios, iosBundleIds: [com.x]}\n").project.apiKey == "ios")
    }

    @Test("each key's restriction is checked against the headers Google reads")
    func admits() throws {
        let keys = try parse(Self.keys).project.apiKeys
        let nothing = APIKey.Client()
        #expect(keys[0].admits(nothing) && keys[4].admits(nothing))
        #expect(!keys[1].admits(nothing) && !keys[2].admits(nothing) && !keys[3].admits(nothing))
        #expect(keys[1].admits(.init(iosBundleID: "com.example.app.beta")))
        #expect(!keys[1].admits(.init(iosBundleID: "com.example.App")) && !keys[1].admits(.init(iosBundleID: "com.example")))
        #expect(keys[2].admits(.init(androidPackage: "com.example.app", androidCert: "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709")))
        #expect(
            keys[2].admits(
                .init(androidPackage: "com.example.app", androidCert: "da:39:a3:ee:5e:6b:4b:0d:32:55:bf:ef:95:60:18:90:af:d8:07:09")))
        #expect(!keys[2].admits(.init(androidPackage: "com.example.app")))
        #expect(!keys[2].admits(.init(androidPackage: "com.example.other", androidCert: "da39a3ee5e6b4b0d3255bfef95601890afd80709")))
        #expect(!keys[2].admits(.init(androidPackage: "com.example.app", androidCert: "da39a3ee5e6b4b0d3255bfef95601890afd80708")))
        #expect(keys[3].admits(.init(referrer: "https://app.example.com/")) && keys[3].admits(.init(referrer: "http://a.example.org/x")))
        #expect(!keys[3].admits(.init(referrer: "https://evil.example.net/")) && !keys[3].admits(.init(iosBundleID: "com.example.app")))
    }

    @Test("apiKeys entries take index-path variables; bad keys and restrictions name their key, index and line")
    func apiKeyErrors() throws {
        let overridden = try parse(
            Self.keys,
            environment: [
                "ACTIONLINKS_PROJECT_API_KEYS_0_IOS_BUNDLE_IDS": "com.example.other",
                "ACTIONLINKS_PROJECT_API_KEYS_1_ANDROID_APPS_0_SHA1": "00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01",
                "ACTIONLINKS_PROJECT_API_KEYS_3_KEY": "server-key-2",
            ]
        ).project
        #expect(overridden.apiKeys[1].restriction == .iosApps(["com.example.other"]))
        #expect(
            overridden.apiKeys[2].admits(.init(androidPackage: "com.example.app", androidCert: String(repeating: "0", count: 39) + "1")))
        #expect(overridden.apiKeys[4].key == "server-key-2")

        // Each entry of apiKeys alone (or after project.apiKey: k), the key the problem names
        // under project.apiKeys, and what its message says.
        let entries: [(entries: [String], at: String, says: String)] = [
            (["{iosBundleIds: [com.x]}"], "[0]", "key is required"),
            (["{key: 'a b'}"], "[0].key", "printable ASCII"),
            (["{key: k, iosBundleIds: [com.x], httpReferrers: [a.com]}"], "[0].httpReferrers", "one application restriction"),
            (["{key: k, iosBundleIds: []}"], "[0].iosBundleIds", "at least one bundle ID"),
            (["{key: k, iosBundleIds: [com.x, 'no spaces']}"], "[0].iosBundleIds[1]", "iOS bundle ID"),
            (["{key: k, androidApps: [{packageName: app, sha1: x}]}"], "[0].androidApps[0].packageName", "package name"),
            (["{key: k, androidApps: [{packageName: com.x, sha1: 'AB:CD'}]}"], "[0].androidApps[0].sha1", "SHA-1"),
            (["{key: k, androidApps: []}"], "[0].androidApps", "at least one app"),
            (["{key: k, httpReferrers: [a.com, '*']}"], "[0].httpReferrers[1]", "'*' may stand only"),
            (["{key: k, iosBundleId: [com.x]}"], "[0].iosBundleId", "did you mean 'iosBundleIds'"),
            (["APIKEY", "{key: k, iosBundleIds: [com.x]}"], "[0].key", "already listed"),
            (["{key: a}", "{key: a}"], "[1].key", "already listed"),
        ]
        for (list, at, says) in entries {
            var yaml = "project:\n"
            if list.first == "APIKEY" { yaml += "  apiKey: k\n" }
            yaml += "  apiKeys:\n" + list.filter { $0 != "APIKEY" }.map { "    - \($0)\n" }.joined()
            let problem = try #require(error(yaml), "\(yaml)")
            #expect(problem.file == "t.yaml" && problem.key == "project.apiKeys" + at && problem.line != nil, "\(problem)")
            #expect(problem.message.contains(says), "\(problem)")
        }
        let fromEnvironment = try #require(
            error(Self.keys, environment: ["ACTIONLINKS_PROJECT_API_KEYS_2_HTTP_REFERRERS": "ok.com,bad.*.com"]))
        #expect(fromEnvironment.file == "environment variable ACTIONLINKS_PROJECT_API_KEYS_2_HTTP_REFERRERS", "\(fromEnvironment)")
        #expect(fromEnvironment.key == "project.apiKeys[2].httpReferrers[1]", "\(fromEnvironment)")
    }

    @Test("project.mobileLinkDomain: the first link domain by default, another of them, or none; anything else is refused")
    func mobileLinkDomain() throws {
        let domains = "linkDomains: [links.example.com, go.example.com]\n"
        #expect(try parse(domains).mobileLinkDomain?.host == "links.example.com")
        #expect(try parse(domains + "project:\n  mobileLinkDomain: go.example.com\n").mobileLinkDomain?.host == "go.example.com")
        #expect(try parse(domains + "project:\n  mobileLinkDomain: none\n").mobileLinkDomain == nil)
        #expect(try parse(domains, environment: ["ACTIONLINKS_PROJECT_MOBILE_LINK_DOMAIN": "none"]).mobileLinkDomain == nil)
        let foreign = try #require(error(domains + "project:\n  mobileLinkDomain: other.example.com\n"))
        #expect(foreign.key == "project.mobileLinkDomain" && foreign.line == 3, "\(foreign)")
        #expect(foreign.message == "expected one of linkDomains (links.example.com, go.example.com), or none; got 'other.example.com'")
        let malformed = try #require(error(domains + "project:\n  mobileLinkDomain: 'x y'\n"))
        #expect(malformed.key == "project.mobileLinkDomain" && malformed.message.hasPrefix("expected one of linkDomains, or none"))
    }

    @Test("limits.dailyQuotas and dailyLinkQuotas: off by default, whole numbers per mode, from the file or the environment")
    func dailyQuotas() throws {
        let defaults = try parse("").limits
        #expect(defaults.dailyQuotas == DailyQuotas() && defaults.dailyLinkQuotas == DailyQuotas())
        let limits = try parse(
            "limits:\n  dailyQuotas: {signIn: 5, resetPassword: 150}\n  dailyLinkQuotas: {signIn: 20000}\n",
            environment: ["ACTIONLINKS_LIMITS_DAILY_QUOTAS_VERIFY_EMAIL": "0"]
        ).limits
        #expect(limits.dailyQuotas == DailyQuotas(signIn: 5, resetPassword: 150, verifyEmail: 0))
        #expect(limits.dailyLinkQuotas == DailyQuotas(signIn: 20000))
        let bad = try #require(error("limits:\n  dailyQuotas:\n    signIn: -1\n"))
        #expect(bad.description == "t.yaml:3:13: limits.dailyQuotas.signIn: expected a whole number from 0 to 1000000000; got '-1'")
        let unknown = try #require(error("limits:\n  dailyQuotas:\n    signin: 5\n"))
        #expect(unknown.key == "limits.dailyQuotas.signin" && unknown.message.contains("did you mean 'signIn'"), "\(unknown)")
    }
}
