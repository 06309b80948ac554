import ActionLinks
import ActionLinksEmail

/// The policy continue URLs found in fuzzed emails are evaluated against.
let policy = try! ContinueURLPolicy(allow: ["app.example.com", "*.example.org"], defaultOrigin: "https://app.example.com")

/// libFuzzer's entry point for the email path: MIME, transfer encodings, charsets, HTML through
/// libxml2, the text URL finder and the rewriter unwrapping. The first byte picks the format (or
/// detection), so the fuzzer reaches each reader directly; a violated invariant traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    guard let selector = input.first else { return 0 }
    let body = input.dropFirst()
    let format: EmailInspection.Format? =
        switch selector % 4 {
        case 0: nil
        case 1: .eml
        case 2: .html
        default: .text
        }

    let email = EmailInspection(body, format: format, policy: policy)
    for link in email.links {
        precondition(link.found.line >= 1, "a link before the first line")
        precondition(!link.found.url.isEmpty, "an empty link was reported")
        precondition(!link.found.url.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\t" }, "a link kept a line break")
        if link.found.origin == .plainText || link.found.origin == .htmlText {
            precondition(link.found.url.lowercased().hasPrefix("http"), "a text link that does not start with its scheme")
        }
        precondition(link.rewriting.layers.count <= RewriterUnwrapping.maximumDepth, "more rewriters than the limit")
        if link.rewriting.layers.isEmpty { precondition(link.rewriting.target == link.found.url, "no rewriter, yet the target changed") }
        if link.verdict == .validActionLink { precondition(link.inspection.action != nil, "a valid action link without an action") }
        if link.rewriting.target == nil { precondition(link.verdict == .hiddenByRewriter, "a hidden target with another verdict") }
    }
    if email.format == .eml {
        precondition(email.parts.count <= MIMEMessage.maximumParts + MIMEMessage.maximumDepth + 1, "more parts than the limit")
    }

    // The decoders on their own: never longer than their input allows, UTF-8 read as itself.
    let slice = ArraySlice(body)
    precondition(TransferEncoding.quotedPrintable.decode(slice).bytes.count <= slice.count, "quoted-printable grew")
    precondition(TransferEncoding.base64.decode(slice).bytes.count <= slice.count * 3 / 4 + 3, "base64 grew")
    if let text = String(validating: body, as: UTF8.self) {
        precondition(CharsetDecoder.decode(body, charset: "utf-8").text == text, "UTF-8 did not decode as itself")
        _ = EncodedWords.decode(text)
        _ = RewriterUnwrapping(text)
        _ = HeaderValueWithParameters(text)
    }
    _ = CharsetDecoder.decode(body, charset: ["iso-2022-jp", "shift_jis", "koi8-r", "euc-jp"][Int(selector >> 2) % 4])
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
