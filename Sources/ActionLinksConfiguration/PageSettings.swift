/// The hosted pages (`pages`).
public struct PageSettings: Sendable, Hashable {
    /// The language of pages and emails when neither the link's `lang` nor the browser's
    /// `Accept-Language` names one there are strings for (`www/strings/<language>.json`).
    public var defaultLanguage = "en"
}

extension PageSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case defaultLanguage
    }

    /// Reads `pages`.
    public init(from decoder: any Decoder) throws {
        let pages = try decoder.container(keyedBy: CodingKeys.self)
        if let language = try pages.string(.defaultLanguage) {
            guard language.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) || $0 == UInt8(ascii: "-") })
            else {
                throw pages.problem(.defaultLanguage, "expected a language code such as en, ru or pt-BR; got '\(language)'")
            }
            defaultLanguage = language.lowercased()
        }
    }
}
