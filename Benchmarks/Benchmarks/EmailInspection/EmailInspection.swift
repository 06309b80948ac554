import ActionLinks
import ActionLinksEmail
import Benchmark
import CLibXML2

/// A 100 KB HTML email with 200 links, built deterministically: table layout and prose like a real
/// newsletter, with direct action links, mobile links, Safe-Links-wrapped and Proofpoint-v3-wrapped
/// sign-in links, SendGrid click-tracked links and ordinary marketing links.
let html: String = {
    let domain = try! LinkDomain("links.example.com")
    var state: UInt64 = 7
    func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(truncatingIfNeeded: state >> 33)
    }
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    func code() -> String { String((0..<43).map { _ in alphabet[next() % alphabet.count] }) }
    func escaped(_ url: String) -> String { url.replacing("&", with: "&amp;") }
    let prose =
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "
    var body = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><style>td{padding:8px}.b a{color:#fff}</style></head><body>\n<table>\n"
    for index in 0..<200 {
        let link = ActionCodeLink(
            mode: ActionCodeLink.Mode.allCases[index % 4], oobCode: code(), apiKey: "AIzaSyBenchmarkKey00000000000000000000",
            continueURL: "https://app.example.com/welcome?from=email&n=\(index)", languageCode: ["en", "ru", "ja"][index % 3])
        let url: String
        switch index % 10 {
        case 0, 1, 2: url = link.webLink(on: domain)
        case 3: url = link.mobileLink(on: domain)
        case 4:
            url =
                "https://nam12.safelinks.protection.outlook.com/?url=" + PercentEncoding.encodeComponent(link.webLink(on: domain))
                + "&data=05%7C02%7C&reserved=0"
        case 5:
            let target = link.webLink(on: domain).replacing("%", with: "*")
            let count = link.webLink(on: domain).count { $0 == "%" }
            let replaced = String(repeating: "JSUl", count: count / 3) + ["", "JQ", "JSU"][count % 3]
            url = "https://urldefense.com/v3/__" + target + "__;" + replaced + "!!Fx1Tr4ZsQ!aBcD3fGh$"
        case 6: url = "https://u1234567.ct.sendgrid.net/ls/click?upn=u001.\(code())\(code())-3D-3D"
        default: url = "https://www.example.com/articles/\(index)?utm_source=newsletter&utm_medium=email&utm_campaign=weekly"
        }
        body += "<tr><td class=\"b\"><p>\(prose)</p><p><a href=\"\(escaped(url))\" target=\"_blank\">Open item \(index)</a></p></td></tr>\n"
    }
    body += "</table>\n"
    while body.utf8.count < 100_000 { body += "<p>\(prose)</p>\n" }
    return body + "</body></html>\n"
}()

/// The same email as a quoted-printable .eml, so the MIME path is measured too.
let eml: [UInt8] = {
    var text = "From: Example <noreply@example.com>\r\nSubject: =?utf-8?q?Weekly?=\r\nMIME-Version: 1.0\r\n"
    text += "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
    var column = 0
    for scalar in html.unicodeScalars {
        var piece = scalar == "=" ? "=3D" : String(scalar)
        if scalar == "\n" { piece = "\r\n" }
        if column + piece.utf8.count > 75, scalar != "\n" {
            text += "=\r\n"
            column = 0
        }
        text += piece
        column = scalar == "\n" ? 0 : column + piece.utf8.count
    }
    return Array(text.utf8)
}()

let htmlBytes = Array(html.utf8)
let policy = try! ContinueURLPolicy(allow: ["https://app.example.com/"], defaultOrigin: "https://app.example.com")

/// libxml2 alone: parse the document into a tree and free it, the floor for any HTML approach.
func parseOnly() {
    let options = Int32(
        HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue)
    htmlBytes.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            let document = htmlReadMemory($0, Int32(buffer.count), nil, "UTF-8", options)
            blackHole(document)
            xmlFreeDoc(document)
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock], scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 10_000)

    let full = EmailInspection(htmlBytes, format: .html, policy: policy)
    precondition(html.utf8.count >= 100_000 && html.utf8.count < 110_000, "the email is \(html.utf8.count) bytes")
    precondition(full.links.count == 200, "the email has \(full.links.count) links, not 200")
    precondition(full.links.count { $0.verdict == .validActionLink } == 120, "expected 120 valid action links")
    precondition(EmailInspection(eml, policy: policy).links.count == 200, "the .eml form lost links")

    Benchmark("libxml2 parse only (per 100 KB email)") { benchmark in
        for _ in benchmark.scaledIterations { parseOnly() }
    }

    Benchmark("HTMLLinkExtractor: parse + collect 200 links (per email)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(HTMLLinkExtractor.links(in: html)) }
    }

    Benchmark("EmailInspection of the HTML: links, rewriters, inspection, policy (per email)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(EmailInspection(htmlBytes, format: .html, policy: policy)) }
    }

    // The stages of the full pipeline, over the same 200 links, so the table shows where the time goes.
    let hrefs = HTMLLinkExtractor.links(in: html).map(\.url)
    let targets = full.links.compactMap(\.rewriting.target)

    Benchmark("RewriterUnwrapping of the 200 links (per email)") { benchmark in
        for _ in benchmark.scaledIterations {
            for href in hrefs { blackHole(RewriterUnwrapping(href)) }
        }
    }

    Benchmark("LinkInspection with policy of the unwrapped links (per email)") { benchmark in
        for _ in benchmark.scaledIterations {
            for target in targets { blackHole(LinkInspection(target, policy: policy)) }
        }
    }

    Benchmark("EmailInspection of the .eml (quoted-printable, per email)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(EmailInspection(eml, policy: policy)) }
    }
}
