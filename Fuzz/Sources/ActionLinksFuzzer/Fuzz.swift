import ActionLinks

/// The policy every input is also evaluated against: one entry of each kind.
let policy = try! ContinueURLPolicy(
    allow: ["app.example.com", "*.example.org", "https://shop.example.net:8443/store/", "http://127.0.0.1", "com.example.app://callback"],
    defaultOrigin: "https://app.example.com")
let domain = try! LinkDomain("links.example.com")

/// libFuzzer's entry point: parse, unwrap, inspect and evaluate the input, and check the invariants
/// that must hold for every input. A violated invariant traps, which libFuzzer reports as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)

    let inspection = LinkInspection(input, policy: policy)
    let parsed = ActionCodeLink.parse(input)
    precondition(inspection.action == parsed, "inspection and parse disagree")
    precondition(inspection.layers.count <= LinkUnwrapper.maximumDepth + 1, "chain longer than the depth limit")

    if let parsed {
        precondition(ActionCodeLink.parse(parsed.webLink(on: domain)) == parsed, "web link does not round-trip")
        precondition(ActionCodeLink.parse(parsed.mobileLink(on: domain)) == parsed, "mobile link does not round-trip")
    }

    if case .allowed(let url) = policy.evaluate(input) {
        precondition(policy.evaluate(url) == .allowed(url: url), "an allowed URL is not allowed as itself")
        precondition(url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }, "unsafe byte in an allowed URL")
    }

    if let url = try? URLParts(input) {
        var rebuilt = url.scheme + ":"
        if let host = url.host {
            rebuilt += "//" + (url.userinfo.map { $0 + "@" } ?? "") + host + (url.port.map { ":" + $0 } ?? "")
        }
        rebuilt += url.path + (url.query.map { "?" + $0 } ?? "") + (url.fragment.map { "#" + $0 } ?? "")
        precondition(rebuilt == input, "the components do not reassemble into the input")
    }

    precondition(PercentEncoding.decode(PercentEncoding.encodeComponent(input)) == input, "encode/decode does not round-trip")

    // Hostile JSON: the validators and both matchers must never trap, whatever the bytes.
    let bytes = UnsafeBufferPointer(start: start, count: count)
    if let association = AASAValidator().validate(bytes).usable {
        _ = AASAMatcher(association: association).evaluate(
            AssociatedURL(host: "links.example.com", path: "/__/auth/action", query: "mode=signIn&oobCode=x"),
            appID: "ABCDE12345.com.example.app",
            domain: "links.example.com")
    }
    if let assetLinks = AssetLinksValidator().validate(bytes).usable {
        _ = AssetLinksMatcher(assetLinks: assetLinks).evaluate(
            AssociatedURL(host: "links.example.com", path: "/__/auth/links", query: "link=x"), packageName: "com.example.app",
            certificateFingerprint: "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
            domain: "links.example.com")
    }
    return 0
}

/// libFuzzer's driver; SwiftPM gives every executable its own `main`, so we call the driver from it.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@main
enum FuzzerMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzz))
    }
}

@_silgen_name("exit")
func exit(_ status: CInt) -> Never
