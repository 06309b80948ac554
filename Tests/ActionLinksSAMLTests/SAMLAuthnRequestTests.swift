import Testing

@testable import ActionLinksSAML

@Suite("SAML AuthnRequests", .timeLimit(.minutes(5)))
struct SAMLAuthnRequestTests {
    @Test("the redirect URL carries the deflated request and the RelayState")
    func redirect() throws {
        let request = SAMLAuthnRequest(
            id: SAMLAuthnRequest.newID(), issueInstant: 1_767_225_600_000, destination: "https://idp.example/sso?tenant=a&b",
            assertionConsumerServiceURL: "https://links.example.com/__/auth/handler", issuer: "https://links.example.com")
        #expect(request.id.count == 41 && request.id.hasPrefix("_"))
        let url = request.redirectURL(relayState: "state value/+")
        #expect(url.hasPrefix("https://idp.example/sso?tenant=a&b&SAMLRequest="))
        #expect(url.hasSuffix("&RelayState=state%20value%2F%2B"))
        let encoded = try #require(url.firstMatch(of: #/SAMLRequest=([^&]+)/#)?.1)
        let decoded = try #require(Self.percentDecoded(encoded))
        let xml = String(decoding: try #require(SAMLRedirectBinding.decode(decoded)), as: UTF8.self)
        #expect(xml == request.xml)
        #expect(xml.contains(#"ID="\#(request.id)""#) && xml.contains(#"IssueInstant="2026-01-01T00:00:00Z""#))
        #expect(xml.contains(#"Destination="https://idp.example/sso?tenant=a&amp;b""#))
        #expect(xml.contains(#"AssertionConsumerServiceURL="https://links.example.com/__/auth/handler""#))
        #expect(xml.contains("<saml:Issuer>https://links.example.com</saml:Issuer>"))
        #expect(xml.contains(#"ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST""#))
    }

    /// A query value with its `%XX` sequences decoded.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("raw DEFLATE round trip, and garbage does not inflate")
    func deflate() {
        let text = Array(String(repeating: "SAML ", count: 1000).utf8)
        let deflated = SAMLRedirectBinding.deflate(text)
        #expect(deflated.count < text.count / 10)
        #expect(SAMLRedirectBinding.decode(SAMLBase64.encode(deflated)) == text)
        #expect(SAMLRedirectBinding.decode(SAMLBase64.encode(deflated), limit: 100) == nil)
        #expect(SAMLRedirectBinding.decode("bm90IGRlZmxhdGU=") == nil)
    }

    @Test("certificates: PEM blocks, several, and clear refusals")
    func certificates() throws {
        let pem = try SAMLResponseTests.fixture("idp-cert.pem")
        let other = try SAMLResponseTests.fixture("other-cert.pem")
        #expect(try SAMLCertificate.certificates(pem: pem).count == 1)
        #expect(try SAMLCertificate.certificates(pem: pem + "\n" + other).count == 2)
        #expect(throws: SAMLRejection("expected a PEM certificate ('-----BEGIN CERTIFICATE-----' ... '-----END CERTIFICATE-----')")) {
            try SAMLCertificate.certificates(pem: "MIIC")
        }
        #expect(throws: SAMLRejection("certificate 1 is not an X.509 certificate with a public key that OpenSSL can read")) {
            try SAMLCertificate.certificates(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----")
        }
        #expect(throws: SAMLRejection("certificate 1 has no '-----END CERTIFICATE-----' line")) {
            try SAMLCertificate.certificates(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n")
        }
    }
}
