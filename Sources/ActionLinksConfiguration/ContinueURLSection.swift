import ActionLinks

/// `continueUrls`, read into the library's ``ContinueURLPolicy``.
struct ContinueURLSection: Decodable {
    var policy: ContinueURLPolicy

    enum CodingKeys: String, CodingKey, CaseIterable {
        case allow, defaultOrigin
    }

    init(from decoder: any Decoder) throws {
        let section = try decoder.container(keyedBy: CodingKeys.self)
        let allow = try section.strings(.allow)
        let defaultOrigin = try section.string(.defaultOrigin)
        do throws(ContinueURLPolicy.ConfigurationError) {
            policy = try ContinueURLPolicy(allow: allow, defaultOrigin: defaultOrigin)
        } catch {
            let message = "expected \(error.expected); got '\(error.value)'"
            if error.key.hasPrefix("allow["), let index = Int(error.key.dropFirst(6).dropLast()) {
                throw section.problem(.allow, index: index, message)
            }
            throw DecodingProblem(section.codingPath + [NameKey(stringValue: error.key)], message)
        }
    }
}
