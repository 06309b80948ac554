import ActionLinks
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Answers `GET /__/auth/action` on the connection's event loop when the code store reads on the
/// caller's thread (``ImmediateCodeLookup``: SQLite's, one indexed read of the WAL database, which
/// never waits for a writer): the link is read, the code looked up and the page rendered without leaving the event loop, instead of handing the request to
/// the async responder, the responder to the database's queue, and back twice.
///
/// The answer is the one ``PageRoutes`` gives, made by the same code (``ActionPages/landingStart(uri:acceptLanguage:)``
/// and ``ActionPages/landingPage(link:lookup:language:acceptLanguage:isRemembered:)``), with the same
/// headers in the same order, `Date` as Hummingbird adds it, and the request counted in the
/// metrics as the route's. Anything else passes through untouched: other paths and methods, a
/// request with a `Cookie` (a remembered device is the responder's to recognise) or a `Connection`
/// header, and any request that arrives while an earlier one on the connection is still being
/// answered by the responder (so pipelined responses stay in order).
final class ActionPageFastPath: FastPathHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let pages: ActionPages
    let codes: any ImmediateCodeLookup
    let metrics: ServerMetrics
    let logger: Logger
    var forwarded = 0
    /// The request being answered here, until its `.end` arrives.
    private var answering: (head: HTTPRequest, target: String, acceptLanguage: String?, start: ContinuousClock.Instant)?
    var raw: RawAnswers?

    init(pages: ActionPages, codes: any ImmediateCodeLookup, metrics: ServerMetrics, logger: Logger) {
        self.pages = pages
        self.codes = codes
        self.metrics = metrics
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if forwarded == 0, request.method == .get, let target = request.path, Self.isActionPage(target),
                !request.headerFields.contains(.connection), !request.headerFields.contains(.cookie)
            {
                answering = (request, target, request.headerFields[.acceptLanguage], .now)
                return
            }
            forwarded += 1
            context.fireChannelRead(data)
        case .body:
            if answering == nil { context.fireChannelRead(data) }
        case .end:
            guard let (head, target, acceptLanguage, start) = answering else {
                context.fireChannelRead(data)
                return
            }
            answering = nil
            guard let page = answer(target: target, acceptLanguage: acceptLanguage) else {
                // The page needs a read the event loop does not make: the responder answers it.
                forwarded += 1
                context.fireChannelRead(wrapInboundOut(.head(head)))
                context.fireChannelRead(data)
                return
            }
            if let raw {
                raw.write(page.encoded(date: HTTPDate.now))
                context.triggerUserOutboundEvent(FastPathAnswered(), promise: nil)
            } else {
                var head = page.head
                head.headerFields[.date] = HTTPDate.now
                let body = page.body.flatMap { $0.readableBytes > 0 ? $0 : nil }
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            let duration = ContinuousClock.now - start
            metrics.request(.actionPage, status: page.status.code, duration: duration)
            logger.debug(
                "request",
                metadata: [
                    "method": "GET", "route": "\(ActionCodeLink.actionPath)", "status": "\(page.status.code)", "duration": "\(duration)",
                ])
        }
    }

    /// A fast path after this one (``TokenRefreshFastPath``) answered a request this one passed on,
    /// below the codec and past ``write(context:data:promise:)``: it is counted here, and the event
    /// goes on to the fast paths before this one, which passed that request on too.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is FastPathAnswered, forwarded > 0 { forwarded -= 1 }
        context.triggerUserOutboundEvent(event, promise: promise)
    }

    /// The landing page for a request target, as ``ActionPages/landing(_:)`` makes it; `nil` for a
    /// new-password form of a tenant made through the API, whose policy is a read of the store.
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
}
