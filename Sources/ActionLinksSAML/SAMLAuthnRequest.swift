internal import ActionLinksXMLSec

/// The `<samlp:AuthnRequest>` a service provider sends an identity provider to start a sign-in
/// (SP-initiated Web Browser SSO), and its HTTP-Redirect binding: raw DEFLATE, base64, and the
/// `SAMLRequest` and `RelayState` query parameters on the IdP's single sign-on URL.
public struct SAMLAuthnRequest: Sendable, Hashable {
    /// The request's `ID`, which the response must answer (`InResponseTo`): `_` and 40 hex digits.
    public var id: String
    /// When it was made (ms since 1970).
    public var issueInstant: Int64
    /// The IdP's single sign-on URL (`Destination`).
    public var destination: String
    /// Where the IdP posts its response (`AssertionConsumerServiceURL`, HTTP-POST binding).
    public var assertionConsumerServiceURL: String
    /// The service provider's entity ID (`Issuer`), which the assertion's audience must be.
    public var issuer: String

    public init(id: String, issueInstant: Int64, destination: String, assertionConsumerServiceURL: String, issuer: String) {
        self.id = id
        self.issueInstant = issueInstant
        self.destination = destination
        self.assertionConsumerServiceURL = assertionConsumerServiceURL
        self.issuer = issuer
    }

    /// A fresh request ID: `_` and 160 random bits in hex (an `xs:ID` must not start with a digit).
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "_" + Hex.encode((0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The request as XML.
    public var xml: String {
        """
        <samlp:AuthnRequest xmlns:samlp="\(SAMLNamespace.protocol_)" xmlns:saml="\(SAMLNamespace.assertion)" \
        ID="\(Self.escape(id))" Version="2.0" IssueInstant="\(SAMLTime.text(issueInstant))" \
        Destination="\(Self.escape(destination))" AssertionConsumerServiceURL="\(Self.escape(assertionConsumerServiceURL))" \
        ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">\
        <saml:Issuer>\(Self.escape(issuer))</saml:Issuer></samlp:AuthnRequest>
        """
    }

    /// The URL to send the browser to: `destination` with `SAMLRequest` (the request, deflated and
    /// base64-encoded) and `RelayState` added to its query.
    public func redirectURL(relayState: String) -> String {
        let encoded = SAMLBase64.encode(SAMLRedirectBinding.deflate(Array(xml.utf8)))
        let separator = destination.contains("?") ? "&" : "?"
        return destination + separator + "SAMLRequest=" + Self.component(encoded) + "&RelayState=" + Self.component(relayState)
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func component(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(Character(UnicodeScalar(byte)))
            default:
                encoded += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return encoded
    }
}

/// The HTTP-Redirect binding's compression: raw DEFLATE (RFC 1951) through zlib.
public enum SAMLRedirectBinding {
    /// `bytes` deflated, without a zlib or gzip header.
    public static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: bytes.count + bytes.count / 100 + 64)
        var length = output.count
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { actionlinks_deflate_raw(input.baseAddress, input.count, $0.baseAddress, &length) }
        }
        precondition(status == 0, "zlib's deflate failed (\(status)) with room for the worst case")
        return Array(output.prefix(length))
    }

    /// A `SAMLRequest` (or `SAMLResponse`) of the HTTP-Redirect binding: base64, then raw INFLATE
    /// of at most `limit` bytes. `nil` when it is not that.
    public static func decode(_ parameter: String, limit: Int = 1 << 20) -> [UInt8]? {
        guard let input = SAMLBase64.decode(parameter) else { return nil }
        var output = [UInt8](repeating: 0, count: limit)
        var length = output.count
        let status = input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { actionlinks_inflate_raw(input.baseAddress, input.count, $0.baseAddress, &length) }
        }
        return status == 0 ? Array(output.prefix(length)) : nil
    }
}
