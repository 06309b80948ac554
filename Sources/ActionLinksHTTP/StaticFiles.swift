import ActionLinksDomain
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The JWKS as ``TokenService`` publishes it, answered as a ``PrebuiltJSON`` built once per key set
/// (the service hands out the same bytes until its keys change).
final class PublishedJWKS: Sendable {
    private let built = Mutex<(document: [UInt8], answer: PrebuiltJSON)?>(nil)

    func answer(for document: [UInt8]) -> PrebuiltJSON {
        built.withLock { built in
            if let built, built.document == document { return built.answer }
            let answer = PrebuiltJSON(document, maxAge: 3600)
            built = (document, answer)
            return answer
        }
    }
}

/// A JSON document built once, with its ETag, answered from memory.
package struct PrebuiltJSON: Sendable {
    let body: ByteBuffer
    let headers: HTTPFields
    let etag: String
    /// The whole answer to a `GET`, encoded, with the `Date` of its second.
    private let encoded = EncodedAnswer()

    init(_ bytes: [UInt8], maxAge: Int) {
        body = ByteBuffer(bytes: bytes)
        etag = "\"" + StaticFiles.digest(bytes) + "\""
        headers = [.contentType: "application/json", .eTag: etag, .cacheControl: "public, max-age=\(maxAge)"]
    }

    /// The `GET` answer as the codec would write it (``HTTP1Answer/encode(_:body:)``), encoded once a second.
    func encodedAnswer() -> ByteBuffer {
        let second = HTTPDate.currentSecond
        return encoded.state.withLock { encoded in
            if encoded.second != second {
                let (response, body) = response(method: .get, ifNoneMatch: nil)
                var head = response.head
                head.headerFields[.date] = HTTPDate.format(second)
                encoded = (second, HTTP1Answer.encode(head, body: body))
            }
            return encoded.answer
        }
    }

    func response(for request: Request) -> Response {
        response(method: request.method, ifNoneMatch: request.headers[.ifNoneMatch]).response
    }

    /// The answer to a `GET` or `HEAD`, and its body when it has one.
    func response(method: HTTPRequest.Method, ifNoneMatch: String?) -> (response: Response, body: ByteBuffer?) {
        if ifNoneMatch == etag { return (Response(status: .notModified, headers: headers), nil) }
        if method == .head {
            var headers = headers
            headers[.contentLength] = String(body.readableBytes)
            return (Response(status: .ok, headers: headers), nil)
        }
        return (Response(status: .ok, headers: headers, body: .init(byteBuffer: body)), body)
    }
}

/// An encoded answer and the second its `Date` names.
final class EncodedAnswer: Sendable {
    let state = Mutex<(second: Int, answer: ByteBuffer)>((-1, ByteBuffer()))
}

/// The files of `www/` (other than templates, mail and strings), loaded into memory at start.
public struct StaticFiles: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let headers: HTTPFields
        let etag: String
    }

    let files: [String: File]

    /// Loads every file under `www` except the `templates`, `mail` and `strings` folders.
    public init(www: String) throws {
        var files: [String: File] = [:]
        let root = URL(fileURLWithPath: www).standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else {
            throw PageTemplatesError(path: www, message: "cannot read the folder")
        }
        while let relative = walker.nextObject() as? String {
            let first = relative.split(separator: "/").first.map(String.init) ?? ""
            if ["templates", "mail", "strings"].contains(first) || relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                continue
            }
            let full = (root as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: full)
            else { continue }
            let bytes = [UInt8](data)
            let etag = "\"" + Self.digest(bytes) + "\""
            var headers: HTTPFields = [
                .contentType: Self.contentType(of: relative), .eTag: etag, .cacheControl: "public, max-age=300",
                .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer",
            ]
            // Every HTML page, ours or the site's own, gets the pages' headers (CSP, no framing, ...).
            if relative.lowercased().hasSuffix(".html") || relative.lowercased().hasSuffix(".htm") {
                headers = PageHeadersMiddleware.headers
                headers[.eTag] = etag
            }
            let file = File(body: ByteBuffer(bytes: bytes), headers: headers, etag: etag)
            files["/" + relative] = file
            if relative == "index.html" {
                files["/"] = file
            } else if relative.hasSuffix("/index.html") {
                files["/" + relative.dropLast("index.html".count)] = file
            }
        }
        self.files = files
    }

    func respond(to request: Request) -> Response? {
        guard let file = files[request.uri.path] else { return nil }
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"])
        }
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: file.headers) }
        if request.method == .head {
            var headers = file.headers
            headers[.contentLength] = String(file.body.readableBytes)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: file.headers, body: .init(byteBuffer: file.body))
    }

    static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "txt": "text/plain; charset=utf-8"
        case "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }

    /// A short content hash for ETags (FNV-1a 64; not a security boundary).
    static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xRobotsTag = Self("X-Robots-Tag")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
    static let googAPIKey = Self("x-goog-api-key")!
    static let firebaseLocale = Self("X-Firebase-Locale")!
    static let secFetchSite = Self("Sec-Fetch-Site")!
}
