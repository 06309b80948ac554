import NIOCore
import Testing

@testable import ActionLinksDomain
@testable import ActionLinksHTTP
@testable import ActionLinksServer
@testable import ActionLinksStores

/// A REST call's body as ``RESTCall`` reads it before it is decoded.
@Suite("REST calls: where a target project may be named", .timeLimit(.minutes(5)))
struct RESTCallTests {
    @Test("a target project is looked for only in a body that could name one")
    func mayNameTarget() {
        func call(_ body: String) -> RESTCall {
            RESTCall(caller: Caller(isAdmin: false), namesProject: false, body: ByteBuffer(string: body), query: [:], method: .post)
        }
        for body in [
            #"{"targetProjectId":"p"}"#, #"{"target_project_id":"p"}"#, #"{"TARGET_project_ID":"p"}"#, #"{"\u0074argetProjectId":"p"}"#,
            "%74arget_project_id=p",
        ] {
            #expect(call(body).mayNameTarget, "\(body)")
        }
        for body in [#"{"email":"a@b.c","requestType":"EMAIL_SIGNIN"}"#, "grant_type=refresh_token&refresh_token=abc", ""] {
            #expect(!call(body).mayNameTarget, "\(body)")
        }
    }
}
