/// The hosted pages (`pages`).
public struct PageSettings: Sendable, Hashable {
    /// What a browser that opens an email sign-in link gets (`pages.signIn`).
    public enum SignInPage: String, Sendable, Hashable, CaseIterable {
        /// 303 to the continue URL with the code added, for the app's own Firebase SDK to complete
        /// the sign-in there (Firebase's behaviour; nothing is consumed).
        case redirect
        /// A page with a button that completes the sign-in on this server.
        case confirm
    }

    /// The language of pages and emails when neither the link's `lang` nor the browser's
    /// `Accept-Language` names one there are strings for (`www/strings/<language>.json`).
    public var defaultLanguage = "en"
    /// What a sign-in link's page does (default `redirect`).
    public var signIn = SignInPage.redirect
}

extension PageSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case defaultLanguage, signIn
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
        signIn = try pages.choice(.signIn, as: SignInPage.self) ?? signIn
    }
}
