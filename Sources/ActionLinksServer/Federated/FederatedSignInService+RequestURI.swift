import ActionLinks
import Foundation

// Reading a `requestUri`.

extension FederatedSignInService {
    /// The parameters of a `requestUri`: its query, then `postBody`'s form fields, then its
    /// fragment's, the later winning (as Firebase's emulator merges them); `nil` when it is not an
    /// absolute URL.
    static func parameters(requestURI: String, postBody: String?) -> [String: String]? {
        guard let url = URLComponents(string: requestURI), let scheme = url.scheme, !scheme.isEmpty, url.host?.isEmpty == false else {
            return nil
        }
        var parameters: [String: String] = [:]
        func add(_ query: String?) {
            for pair in (query ?? "").split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    PercentEncoding.decode(text.replacingOccurrences(of: "+", with: " ")) ?? String(text)
                }
                parameters[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
            }
        }
        add(url.percentEncodedQuery)
        add(postBody)
        add(url.percentEncodedFragment)
        return parameters
    }
}
