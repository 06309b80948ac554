import ActionLinks

/// One of the project's API keys (`project.apiKey`, `project.apiKeys`) with the application
/// restriction Google Cloud would enforce on it: none, iOS apps, Android apps or websites (HTTP
/// referrers). A production server refuses a request whose key's restriction its headers do not
/// satisfy, with Google's 403 (a development server takes any key, as Firebase's emulator does).
public struct APIKey: Sendable, Hashable {
    /// Which applications may use the key.
    public enum Restriction: Sendable, Hashable {
        /// Any caller (Google's "None").
        case none
        /// Requests with `X-Ios-Bundle-Identifier` set to one of these bundle IDs.
        case iosApps([String])
        /// Requests with `X-Android-Package` and `X-Android-Cert` naming one of these apps.
        case androidApps([AndroidApp])
        /// Requests whose `Referer` matches one of these entries.
        case httpReferrers([HTTPReferrerPattern])
    }

    /// An Android app a key is restricted to: its package name and the SHA-1 of its signing
    /// certificate.
    public struct AndroidApp: Sendable, Hashable {
        /// The package name (`com.example.app`).
        public var packageName: String
        /// The certificate's SHA-1 as 40 lower-case hex digits, without colons.
        public var sha1: String

        /// An app; `sha1` may be written with colons and in either case.
        public init(packageName: String, sha1: String) {
            self.packageName = packageName
            self.sha1 = APIKey.plainHex(sha1)
        }
    }

    /// What a request says about the application that sent it, from its headers
    /// (``init(header:)``).
    public struct Client: Sendable, Hashable {
        /// `X-Ios-Bundle-Identifier` (the iOS SDK sends it on every call).
        public var iosBundleID: String?
        /// `X-Android-Package`.
        public var androidPackage: String?
        /// `X-Android-Cert`: the signing certificate's SHA-1 in hex.
        public var androidCert: String?
        /// `Referer`.
        public var referrer: String?
    }

    /// The key as clients send it (`?key=`, `X-Goog-Api-Key`) and links carry it (`apiKey=`).
    public var key: String
    /// Which applications may use it.
    public var restriction: Restriction

    /// A key with a restriction (none by default).
    public init(_ key: String, restriction: Restriction = .none) {
        self.key = key
        self.restriction = restriction
    }

    /// Whether the key has an application restriction.
    public var isRestricted: Bool { restriction != .none }

    /// Whether `client` satisfies the key's restriction: the bundle ID exactly; the package exactly
    /// and the certificate's SHA-1 in either case, with or without colons; the referrer by
    /// ``HTTPReferrerPattern/matches(_:)``.
    public func admits(_ client: Client) -> Bool {
        switch restriction {
        case .none:
            return true
        case .iosApps(let bundleIDs):
            guard let bundleID = client.iosBundleID else { return false }
            return bundleIDs.contains(bundleID)
        case .androidApps(let apps):
            guard let package = client.androidPackage, let cert = client.androidCert else { return false }
            let sha1 = Self.plainHex(cert)
            return apps.contains { $0.packageName == package && $0.sha1 == sha1 }
        case .httpReferrers(let patterns):
            guard let referrer = client.referrer else { return false }
            return patterns.contains { $0.matches(referrer) }
        }
    }

    /// `text` without colons, lower-cased (a fingerprint as Google compares it).
    static func plainHex(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != ":" }).lowercased()
    }

    /// Whether `key` can be a key: printable ASCII without spaces, `&` or `#` (it goes into links' queries).
    static func isWellFormed(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "#") }
    }
}

extension APIKey.Client {
    /// The client a request's headers name: `header` gives a header's value by its name.
    public init(header: (String) -> String?) {
        self.init(
            iosBundleID: header("X-Ios-Bundle-Identifier"), androidPackage: header("X-Android-Package"),
            androidCert: header("X-Android-Cert"), referrer: header("Referer"))
    }
}

/// An entry of `project.apiKeys`: `key`, and at most one of `iosBundleIds`, `androidApps` and
/// `httpReferrers` (none: an unrestricted key).
struct APIKeyEntry: Decodable {
    var apiKey: APIKey

    enum CodingKeys: String, CodingKey, CaseIterable {
        case key, iosBundleIds, androidApps, httpReferrers
    }

    init(from decoder: any Decoder) throws {
        let entry = try decoder.container(keyedBy: CodingKeys.self)
        let key = try entry.decode(String.self, forKey: .key)
        guard APIKey.isWellFormed(key) else { throw entry.problem(.key, "expected printable ASCII without spaces, '&' or '#'") }
        let given = [CodingKeys.iosBundleIds, .androidApps, .httpReferrers].filter { entry.contains($0) }
        guard given.count <= 1 else {
            throw entry.problem(
                given[1],
                "a key has one application restriction: iosBundleIds, androidApps or httpReferrers (Google's iOS apps, Android apps or websites), not \(given.map(\.stringValue).joined(separator: " and "))"
            )
        }
        var restriction = APIKey.Restriction.none
        switch given.first {
        case .iosBundleIds?:
            let bundleIDs = try entry.strings(.iosBundleIds)
            guard !bundleIDs.isEmpty else { throw entry.problem(.iosBundleIds, "expected at least one bundle ID such as com.example.app") }
            for (index, bundleID) in bundleIDs.enumerated() where !Self.isBundleID(bundleID) {
                throw entry.problem(
                    .iosBundleIds, index: index,
                    "expected an iOS bundle ID such as com.example.app (letters, digits, '-' and '.'); got '\(bundleID)'")
            }
            restriction = .iosApps(bundleIDs)
        case .androidApps?:
            let apps = try entry.decode([AndroidAppEntry].self, forKey: .androidApps).map(\.app)
            guard !apps.isEmpty else {
                throw entry.problem(.androidApps, "expected at least one app: {packageName: com.example.app, sha1: <certificate SHA-1>}")
            }
            restriction = .androidApps(apps)
        case .httpReferrers?:
            let texts = try entry.strings(.httpReferrers)
            guard !texts.isEmpty else { throw entry.problem(.httpReferrers, "expected at least one website such as app.example.com/*") }
            var patterns: [HTTPReferrerPattern] = []
            for (index, text) in texts.enumerated() {
                do throws(HTTPReferrerPatternError) {
                    patterns.append(try HTTPReferrerPattern(text))
                } catch {
                    throw entry.problem(.httpReferrers, index: index, error.description)
                }
            }
            restriction = .httpReferrers(patterns)
        default:
            break
        }
        apiKey = APIKey(key, restriction: restriction)
    }

    /// An Apple bundle ID: letters, digits, `-` and `.`, not starting or ending with `.`.
    static func isBundleID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 155 && !text.hasPrefix(".") && !text.hasSuffix(".") && !text.contains("..")
            && text.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: ".")
            }
    }

    /// An entry of `androidApps`.
    struct AndroidAppEntry: Decodable {
        var app: APIKey.AndroidApp

        enum CodingKeys: String, CodingKey, CaseIterable {
            case packageName, sha1
        }

        init(from decoder: any Decoder) throws {
            let entry = try decoder.container(keyedBy: CodingKeys.self)
            let packageName = try entry.decode(String.self, forKey: .packageName)
            guard Self.isPackageName(packageName) else {
                throw entry.problem(
                    .packageName,
                    "expected an Android package name such as com.example.app (two or more parts of letters, digits and '_', each starting with a letter); got '\(packageName)'"
                )
            }
            let sha1 = try entry.decode(String.self, forKey: .sha1)
            guard let hex = AppsSection.AndroidEntry.sha1Hex(sha1) else {
                throw entry.problem(
                    .sha1,
                    "expected the signing certificate's SHA-1: 20 bytes in hex, with or without colons, such as "
                        + "DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09; got '\(sha1)'")
            }
            app = APIKey.AndroidApp(packageName: packageName, sha1: hex)
        }

        /// A Java package name of two or more parts.
        static func isPackageName(_ text: String) -> Bool {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count >= 2
                && parts.allSatisfy { part in
                    guard let first = part.utf8.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) else { return false }
                    return part.utf8.allSatisfy {
                        (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "_")
                    }
                }
        }
    }
}
