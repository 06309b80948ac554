import ActionLinksDomain
import Foundation
import HTTPTypes
import NIOCore

/// The server's fast paths as one route (``FastPathRoute``), so one ``FastPathHandler`` holds them
/// all and a request the router answers passes one fast-path handler, not one per fast path: the
/// association files always, the landing page where the store reads on the caller's thread, and the
/// token refresh and issuing on every store. A request is the first's that claims it, in that order. Concrete rather than a
/// generic pair of routes: the handler's code is not specialised for the route it is given (NIO
/// calls it through its class), and over nested generic routes each claim, copy and call went
/// through the generic machinery (the association files cost 30% more CPU a request in
/// `scripts/bench.sh`); here each case is the route's own type, called directly.
package struct ServerFastPaths: FastPathRoute {
    let association: AssociationFastPath
    let page: ActionPageFastPath?
    let refresh: TokenRefreshFastPath?
    let issuing: SendOobCodeFastPath?

    /// A claim of one of the routes.
    package enum Claim {
        case association(AssociationFastPath.Claim)
        case page(ActionPageFastPath.Claim)
        case refresh(String)
        case issuing(String)
    }

    /// An answer of one of the routes.
    package enum Answer: Sendable {
        case association(AssociationFastPath.Claim)
        case page(PageAnswer)
        case refresh(RESTAnswer)
        case issuing(RESTAnswer)
    }

    /// The routes; `nil` for a fast path the store does not allow.
    package init(
        association: AssociationFastPath, page: ActionPageFastPath?, refresh: TokenRefreshFastPath?, issuing: SendOobCodeFastPath?
    ) {
        self.association = association
        self.page = page
        self.refresh = refresh
        self.issuing = issuing
    }

    package func claim(_ head: HTTPRequest) -> Claim? {
        if let claim = association.claim(head) { return .association(claim) }
        if let page, let claim = page.claim(head) { return .page(claim) }
        if let refresh, let claim = refresh.claim(head) { return .refresh(claim) }
        if let issuing, let claim = issuing.claim(head) { return .issuing(claim) }
        return nil
    }

    package func metricsRoute(for claim: Claim) -> ServerMetrics.Route {
        switch claim {
        case .association: .association
        case .page: .actionPage
        case .refresh, .issuing: .api
        }
    }

    package func maximumBody(for claim: Claim) -> Int? {
        switch claim {
        case .association(let claim): association.maximumBody(for: claim)
        case .page(let claim): page?.maximumBody(for: claim)
        case .refresh(let claim): refresh?.maximumBody(for: claim)
        case .issuing(let claim): issuing?.maximumBody(for: claim)
        }
    }

    package func answersLater(_ claim: Claim) -> Bool {
        switch claim {
        case .association, .page: false
        case .refresh(let claim): refresh?.answersLater(claim) ?? false
        case .issuing(let claim): issuing?.answersLater(claim) ?? false
        }
    }

    package func answer(_ claim: Claim, head: HTTPRequest, body: ByteBuffer) -> Answer? {
        switch claim {
        case .association(let claim): association.answer(claim, head: head, body: body).map(Answer.association)
        case .page(let claim): page?.answer(claim, head: head, body: body).map(Answer.page)
        case .refresh(let claim): refresh?.answer(claim, head: head, body: body).map(Answer.refresh)
        case .issuing: nil
        }
    }

    package func start(
        _ claim: Claim, head: HTTPRequest, body: ByteBuffer, peer: String?,
        reply: @escaping @Sendable (@escaping @Sendable () -> Answer) -> Void
    ) -> Bool {
        switch claim {
        case .association, .page: false
        case .refresh(let claim): refresh?.start(claim, head: head, body: body, peer: peer) { make in reply { .refresh(make()) } } ?? false
        case .issuing(let claim): issuing?.start(claim, head: head, body: body, peer: peer) { make in reply { .issuing(make()) } } ?? false
        }
    }

    package func status(of answer: Answer) -> Int {
        switch answer {
        case .association(let answer): association.status(of: answer)
        case .page(let answer): answer.status.code
        case .refresh(let answer), .issuing(let answer): answer.status
        }
    }

    package func encoded(_ answer: Answer) -> ByteBuffer? {
        switch answer {
        case .association(let answer): association.encoded(answer)
        case .page(let answer): page?.encoded(answer)
        case .refresh(let answer), .issuing(let answer): answer.encoded
        }
    }

    package func parts(of answer: Answer) -> (head: HTTPResponse, body: ByteBuffer?) {
        switch answer {
        case .association(let answer): return association.parts(of: answer)
        case .page(let answer): return page?.parts(of: answer) ?? (HTTPResponse(status: .internalServerError), nil)
        case .refresh(let answer), .issuing(let answer): return answer.parts
        }
    }

    package func logRoute(_ claim: Claim) -> String {
        switch claim {
        case .association(let claim): association.logRoute(claim)
        case .page(let claim): page?.logRoute(claim) ?? ""
        case .refresh(let claim), .issuing(let claim): claim
        }
    }
}
