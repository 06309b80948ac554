import ActionLinks

/// `application/x-www-form-urlencoded` text as names and values: the server's one reading of a
/// query, a form body, or the parameters in a fragment, with **one rule for repeated names**.
///
/// - Pairs are separated by `&` (empty ones are skipped); a pair splits at its first `=` (without
///   one, the value is empty); `+` is a space; `%HH` escapes decode as UTF-8.
/// - **A name that appears twice refuses the whole text** (`nil`), whatever its values: which of
///   two `state`s, `code`s, `SAMLResponse`s or `RelayState`s counts is a question best not asked.
///   (The REST API's form bodies get the same rule from Hummingbird's `URLEncodedFormDecoder`.)
/// - A malformed escape, or one that is not UTF-8, refuses the whole text too.
///
/// Hummingbird's `URLEncodedFormDecoder` is not used here: it reads `a[b]=` and `a[]=` as nested
/// maps and arrays (a provider's parameter may have brackets in its name) and drops a pair
/// without `=`; `request.uri.queryParameters` keeps every value of a repeated name.
package enum FormFields {
    package static func decode(_ text: some StringProtocol) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = component(parts[0]), let value = component(parts.count > 1 ? parts[1] : ""),
                fields.updateValue(value, forKey: name) == nil
            else { return nil }
        }
        return fields
    }

    /// One name or value: `+` is a space, then escapes decode.
    private static func component(_ text: some StringProtocol) -> String? {
        let spaced = text.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        return PercentEncoding.decode(Substring(String(decoding: spaced, as: UTF8.self)))
    }
}
