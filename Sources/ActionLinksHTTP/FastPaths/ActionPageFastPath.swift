import ActionLinks
import ActionLinksDomain
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// `GET /__/auth/action`, answered on the event loop (``FastPathRoute``) when the code store reads
/// on the caller's thread (``ImmediateCodeLookup``: SQLite's, one indexed read of the WAL database,
/// which never waits for a writer): the link is read, the code looked up and the page rendered
/// without leaving the event loop, instead of handing the request to the async responder, the
/// responder to the database's queue, and back twice.
///
/// The answer is the one ``PageRoutes`` gives, made by the same code (``ActionPages/landingStart(uri:acceptLanguage:)``
/// and ``ActionPages/landingPage(link:lookup:language:acceptLanguage:passwords:isRemembered:)``).
/// A request with a `Cookie` (a remembered device is the responder's to recognise) goes on to the
/// router, and so does a page whose answer needs a read the event loop does not make.
package struct ActionPageFastPath: FastPathRoute {
    /// A landing page's request: its target and `Accept-Language`.
    package typealias Claim = (target: String, acceptLanguage: String?)

    let pages: ActionPages
    let codes: any ImmediateCodeLookup

    package func metricsRoute(for claim: Claim) -> ServerMetrics.Route { .actionPage }
    package func maximumBody(for claim: Claim) -> Int? { nil }

    package func claim(_ head: HTTPRequest) -> Claim? {
        guard head.method == .get, let target = head.path, Self.isActionPage(target), !head.headerFields.contains(.cookie) else {
            return nil
        }
        return (target, head.headerFields[.acceptLanguage])
    }

    package func answer(_ claim: Claim, head: HTTPRequest, body: ByteBuffer) -> PageAnswer? {
        answer(target: claim.target, acceptLanguage: claim.acceptLanguage)
    }

    package func status(of answer: PageAnswer) -> Int { answer.status.code }

    package func encoded(_ answer: PageAnswer) -> ByteBuffer? { answer.encoded(date: HTTPDate.now) }

    package func parts(of answer: PageAnswer) -> (head: HTTPResponse, body: ByteBuffer?) {
        (answer.head, answer.body.flatMap { $0.readableBytes > 0 ? $0 : nil })
    }

    package func logRoute(_ claim: Claim) -> String { ActionCodeLink.actionPath }

    /// The landing page for a request target, as ``ActionPages/landing(_:)`` makes it; `nil` for a
    /// new-password form of a tenant made through the API, whose policy is a read of the store, and
    /// for a second-factor revert, whose factor is.
    func answer(target: String, acceptLanguage: String?) -> PageAnswer? {
        switch pages.landingStart(uri: URI(target), acceptLanguage: acceptLanguage) {
        case .page(let page):
            return page
        case .lookUp(let link, let language):
            let record: Result<ActionCodeRecord, ActionError>
            var passwords: PasswordPolicy?
            do throws(ActionError) {
                let found = try pages.completer.checkNow(code: link.oobCode, tenantID: link.tenantID ?? "", in: codes)
                if found.mode == .resetPassword {
                    guard let tenant = pages.tenants.policyNow(for: found.tenantID) else { return nil }
                    passwords = tenant.passwords
                }
                // A revert page shows its factor, a read of the account: the router's.
                if found.mode == .revertSecondFactorAddition { return nil }
                record = .success(found)
            } catch {
                record = .failure(error)
            }
            // Without a cookie, no device is remembered.
            return pages.landingPage(
                link: link, lookup: record, language: language, acceptLanguage: acceptLanguage, passwords: passwords
            ) { _ in false }
        }
    }

    /// Whether a request target is the action page's path, with or without a query.
    static func isActionPage(_ target: String) -> Bool {
        let path = ActionCodeLink.actionPath.utf8
        let bytes = target.utf8
        guard bytes.starts(with: path) else { return false }
        let rest = bytes.dropFirst(path.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "?")
    }

    /// Makes the value from each of its fields.
    package init(pages: ActionPages, codes: any ImmediateCodeLookup) {
        self.pages = pages
        self.codes = codes
    }
}
