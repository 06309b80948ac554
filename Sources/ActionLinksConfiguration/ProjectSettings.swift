/// The project the server stands in for (`project`).
public struct ProjectSettings: Sendable, Hashable {
    /// The project ID in REST paths (`/v1/projects/<id>/...`).
    public var id = "demo-actionlinks"
    /// The API key clients pass as `?key=` or `x-goog-api-key`; it goes into every link.
    public var apiKey = "demo-api-key"
    /// The app's name, as emails and pages show it.
    public var appName = "ActionLinks"
}

extension ProjectSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, apiKey, appName
    }

    /// Reads `project`.
    public init(from decoder: any Decoder) throws {
        let project = try decoder.container(keyedBy: CodingKeys.self)
        if let id = try project.string(.id) {
            guard id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw project.problem(.id, "expected lower-case letters, digits and hyphens; got '\(id)'")
            }
            self.id = id
        }
        if let key = try project.string(.apiKey) {
            guard key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "#") }) else {
                throw project.problem(.apiKey, "expected printable ASCII without spaces, '&' or '#'")
            }
            apiKey = key
        }
        appName = try project.string(.appName) ?? appName
    }
}
