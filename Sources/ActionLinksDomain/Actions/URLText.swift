import ActionLinks

/// Redirect targets built from allow-listed URLs: a query added, a fragment replaced.
package enum URLText {
    /// `url` with `items` added to its query (before any fragment), each name and value
    /// percent-encoded (a provider's custom parameter named `a&state` stays one parameter).
    package static func url(_ url: String, adding items: [(String, String)]) -> String {
        let query = items.map { "\(PercentEncoding.encodeComponent($0.0))=\(PercentEncoding.encodeComponent($0.1))" }.joined(separator: "&")
        let hash = url.firstIndex(of: "#")
        let base = hash.map { String(url[..<$0]) } ?? url
        let fragment = hash.map { String(url[$0...]) } ?? ""
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + query + fragment
    }

    /// `url` with its fragment replaced by `fragment`.
    package static func url(_ url: String, fragment: String) -> String {
        (url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url) + "#" + fragment
    }
}
