import ActionLinks
import Foundation

// Reading a `requestUri`.

extension FederatedSignInService {
    /// The parameters of a `requestUri`: its query, then `postBody`'s form fields, then its
    /// fragment's, each read by ``FormFields`` (a name repeated within one of them refuses the
    /// whole), a later one's value replacing an earlier one's (as Firebase's emulator merges
    /// them); `nil` when it is not an absolute URL or a part is refused.
    static func parameters(requestURI: String, postBody: String?) -> [String: String]? {
        guard let url = URLComponents(string: requestURI), let scheme = url.scheme, !scheme.isEmpty, url.host?.isEmpty == false else {
            return nil
        }
        var parameters: [String: String] = [:]
        for part in [url.percentEncodedQuery, postBody, url.percentEncodedFragment] {
            guard let fields = FormFields.decode(part ?? "") else { return nil }
            parameters.merge(fields) { _, later in later }
        }
        return parameters
    }
}
