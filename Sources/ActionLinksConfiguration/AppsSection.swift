import ActionLinks

/// `apps`, read into the library's ``AppsConfiguration``. Each app is checked by generating its
/// file, so a bad team ID or fingerprint is reported at start with its key, not when a phone first
/// asks for the file.
struct AppsSection: Decodable {
    var apps = AppsConfiguration()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case ios, android, rules, webcredentials, appclips, claimActionLinks
    }

    init(from decoder: any Decoder) throws {
        let section = try decoder.container(keyedBy: CodingKeys.self)
        apps.appleApps = try section.decode([AppleEntry].self, forKey: .ios).map(\.app)
        apps.androidApps = try section.decode([AndroidEntry].self, forKey: .android).map(\.app)
        apps.extraRules = try section.decode([RuleEntry].self, forKey: .rules).map(\.rule)
        apps.webCredentialsAppIDs = try section.strings(.webcredentials)
        apps.appClipAppIDs = try section.strings(.appclips)
        apps.claimActionLinks = try section.boolean(.claimActionLinks) ?? false
        let generator = AssociationGenerator(configuration: apps)
        do throws(AssociationGeneratorError) {
            if !apps.appleApps.isEmpty { _ = try generator.appleAppSiteAssociation() }
            if !apps.androidApps.isEmpty { _ = try generator.assetLinks() }
        } catch {
            throw section.problem(error.description)
        }
    }

    /// An entry of `apps.ios`.
    struct AppleEntry: Decodable {
        var app: AppsConfiguration.AppleApp

        enum CodingKeys: String, CodingKey, CaseIterable {
            case teamId, bundleId, appStoreId, googleAppId, clientId
        }

        init(from decoder: any Decoder) throws {
            let entry = try decoder.container(keyedBy: CodingKeys.self)
            app = AppsConfiguration.AppleApp(
                teamID: try entry.decode(String.self, forKey: .teamId), bundleID: try entry.decode(String.self, forKey: .bundleId),
                appStoreID: try entry.string(.appStoreId), googleAppID: try entry.string(.googleAppId),
                clientID: try entry.string(.clientId))
            if let id = app.googleAppID, !Self.isGoogleAppID(id) {
                throw entry.problem(
                    .googleAppId,
                    "expected the app's Firebase app ID (GOOGLE_APP_ID) such as 1:1234567890:ios:0123456789abcdef; got '\(id)'")
            }
            if let id = app.clientID, !Self.isClientID(id) {
                throw entry.problem(
                    .clientId,
                    "expected the app's OAuth client ID (CLIENT_ID) such as 1234567890-abc.apps.googleusercontent.com; got '\(id)'")
            }
            do throws(AssociationGeneratorError) {
                _ = try AssociationGenerator(configuration: AppsConfiguration(appleApps: [app])).appleAppSiteAssociation()
            } catch {
                throw entry.problem(error.description)
            }
        }

        /// `1:<project number>:ios:<hex>`.
        static func isGoogleAppID(_ id: String) -> Bool {
            let parts = id.split(separator: ":", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "1" && parts[2] == "ios" && isDigits(parts[1])
                && !parts[3].isEmpty && parts[3].utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }

        /// `<project number>-<letters and digits>.apps.googleusercontent.com`.
        static func isClientID(_ id: String) -> Bool {
            let suffix = ".apps.googleusercontent.com"
            guard id.hasSuffix(suffix) else { return false }
            let parts = id.dropLast(suffix.count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            return parts.count == 2 && isDigits(parts[0]) && !parts[1].isEmpty
                && parts[1].utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
        }

        private static func isDigits(_ text: Substring) -> Bool {
            !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
        }
    }

    /// An entry of `apps.android`.
    struct AndroidEntry: Decodable {
        var app: AppsConfiguration.AndroidApp

        enum CodingKeys: String, CodingKey, CaseIterable {
            case packageName, sha256CertFingerprints, sha1CertFingerprints, minimumVersion
        }

        init(from decoder: any Decoder) throws {
            let entry = try decoder.container(keyedBy: CodingKeys.self)
            let packageName = try entry.decode(String.self, forKey: .packageName)
            let fingerprints = try entry.strings(.sha256CertFingerprints)
            var minimumVersion: Int?
            if let scalar = try entry.scalar(.minimumVersion) {
                guard let text = scalar.text, let value = Int(text), value >= 0 else {
                    throw entry.problem(.minimumVersion, "expected a non-negative whole number (versionCode); got \(scalar.shown)")
                }
                minimumVersion = value
            }
            let sha1 = try entry.strings(.sha1CertFingerprints)
            for fingerprint in sha1 where Self.sha1Hex(fingerprint) == nil {
                throw entry.problem(
                    .sha1CertFingerprints,
                    "expected a SHA-1 certificate fingerprint: 20 bytes in hex, with or without colons, such as "
                        + "DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09; got '\(fingerprint)'")
            }
            app = AppsConfiguration.AndroidApp(
                packageName: packageName, sha256Fingerprints: fingerprints, minimumVersion: minimumVersion, sha1Fingerprints: sha1)
            do throws(AssociationGeneratorError) {
                _ = try AssociationGenerator(configuration: AppsConfiguration(androidApps: [app])).assetLinks()
            } catch {
                throw entry.problem(error.description)
            }
        }

        /// The 40 lower-case hex digits of a SHA-1 fingerprint written `AB:CD:...` or `abcd...`;
        /// `nil` when it is not one.
        static func sha1Hex(_ text: String) -> String? {
            let bytes = Array(text.utf8)
            let digits: [UInt8]
            if bytes.count == 59 {
                guard (0..<59).allSatisfy({ $0 % 3 != 2 || bytes[$0] == UInt8(ascii: ":") }) else { return nil }
                digits = bytes.enumerated().filter { $0.offset % 3 != 2 }.map(\.element)
            } else {
                digits = bytes
            }
            guard digits.count == 40,
                digits.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
            else { return nil }
            return String(decoding: digits, as: UTF8.self).lowercased()
        }
    }

    /// An entry of `apps.rules`.
    struct RuleEntry: Decodable {
        var rule: AppsConfiguration.PathRule

        enum CodingKeys: String, CodingKey, CaseIterable {
            case path, query, fragment, exclude, comment
        }

        init(from decoder: any Decoder) throws {
            let entry = try decoder.container(keyedBy: CodingKeys.self)
            let path = try entry.decode(String.self, forKey: .path)
            let query = try entry.nestedContainer(keyedBy: NameKey.self, forKey: .query)
            var parameters: [AssetLinks.DynamicComponent.QueryParameter] = []
            for name in query.allKeys {
                parameters.append(.init(name: name.stringValue, pattern: try query.decode(String.self, forKey: name)))
            }
            rule = AppsConfiguration.PathRule(
                path: path, query: parameters, fragment: try entry.string(.fragment), exclude: try entry.boolean(.exclude) ?? false,
                comment: try entry.string(.comment))
        }
    }
}
