import ActionLinksDomain
import HTTPTypes
import NIOCore

/// `GET`/`HEAD` of the association files, answered on the event loop (``FastPathRoute``).
///
/// These are the requests Apple's CDN and Android's verifier make, they are answered from memory,
/// and Hummingbird's hand-off to Swift concurrency costs more than the answer itself. The answer is
/// the one ``AssociationRoutes`` gives (same ``PrebuiltJSON``, same headers, plus `Date` as
/// Hummingbird adds it). Other paths and methods go on to the router.
package struct AssociationFastPath: FastPathRoute {
    /// A request answered here: its file, method, `If-None-Match` and target.
    package typealias Claim = (file: PrebuiltJSON, method: HTTPRequest.Method, ifNoneMatch: String?, path: String)

    let files: [String: PrebuiltJSON]

    package func metricsRoute(for claim: Claim) -> ServerMetrics.Route { .association }
    package func maximumBody(for claim: Claim) -> Int? { nil }

    package func claim(_ head: HTTPRequest) -> Claim? {
        guard head.method == .get || head.method == .head, let path = head.path, let file = file(for: path) else { return nil }
        return (file, head.method, head.headerFields[.ifNoneMatch], path)
    }

    package func answer(_ claim: Claim, head: HTTPRequest, body: ByteBuffer) -> Claim? { claim }

    package func status(of answer: Claim) -> Int {
        answer.ifNoneMatch == answer.file.etag ? 304 : 200
    }

    /// A `GET`'s whole answer, encoded once a second; a `HEAD` or a `304` goes as parts.
    package func encoded(_ answer: Claim) -> ByteBuffer? {
        answer.method == .get && answer.ifNoneMatch != answer.file.etag ? answer.file.encodedAnswer() : nil
    }

    package func parts(of answer: Claim) -> (head: HTTPResponse, body: ByteBuffer?) {
        let (response, body) = answer.file.response(method: answer.method, ifNoneMatch: answer.ifNoneMatch)
        return (response.head, body)
    }

    /// The file's path, never the query.
    package func logRoute(_ claim: Claim) -> String { String(claim.path.prefix { $0 != "?" }) }

    /// The file for a request target: the exact path, with or without a query.
    func file(for target: String) -> PrebuiltJSON? {
        if let query = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            return files[String(target[..<query])]
        }
        return files[target]
    }

    /// Makes the value from each of its fields.
    package init(files: [String: PrebuiltJSON]) {
        self.files = files
    }
}
