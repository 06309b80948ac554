import Testing

@testable import ActionLinksSAML

/// Responses signed by pysaml2's IdP (Fixtures, made by Tests/SAMLIdP/make_fixtures.py), checked
/// as they are and after the changes an attacker would make: tampering, a missing or weak
/// signature, another key, expiry, another audience, recipient or request, and XML signature
/// wrapping.
@Suite("SAML responses", .timeLimit(.minutes(5)))
struct SAMLResponseTests {
    static let requestID = "_0123456789abcdef0123456789abcdef01234567"
    static let acs = "https://links.test.example/__/auth/handler"

    static func fixture(_ name: String) throws -> String {
        String(decoding: try Fixtures.bytes(name), as: UTF8.self)
    }

    static func certificates(_ name: String = "idp-cert.pem") throws -> [SAMLCertificate] {
        try SAMLCertificate.certificates(pem: try fixture(name))
    }

    /// The response's IssueInstant (ms): the tests' clock.
    static func issued(_ xml: String) throws -> Int64 {
        let match = try #require(xml.firstMatch(of: #/IssueInstant="([^"]+)"/#))
        return try #require(SAMLTime.milliseconds(String(match.1)))
    }

    static func expectation(for xml: String, at offset: Int64 = 1000) throws -> SAMLExpectation {
        SAMLExpectation(
            identityProvider: "https://idp.test.example/metadata", certificates: try certificates(),
            serviceProvider: "https://links.test.example", assertionConsumerServiceURL: acs, requestID: requestID,
            now: try issued(xml) + offset)
    }

    static func validate(_ xml: String, _ expectation: SAMLExpectation) throws(SAMLRejection) -> SAMLAssertion {
        try SAMLResponse.validate(SAMLBase64.encode(Array(xml.utf8)), expectation)
    }

    /// The refusal's reason, or a failure when the response was accepted.
    static func refusal(_ xml: String, _ expectation: SAMLExpectation) -> String {
        do {
            let accepted = try validate(xml, expectation)
            Issue.record("accepted: \(accepted)")
            return ""
        } catch {
            return error.reason
        }
    }

    // MARK: Accepted

    @Test(
        "an assertion signed by the IdP is accepted, with its NameID and attributes",
        arguments: ["signed-assertion", "signed-response", "signed-both"])
    func accepted(_ name: String) throws {
        let xml = try Self.fixture(name + ".xml")
        let assertion = try Self.validate(xml, try Self.expectation(for: xml))
        #expect(assertion.nameID == "alice@corp.example")
        #expect(assertion.nameIDFormat == "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress")
        #expect(assertion.issuer == "https://idp.test.example/metadata")
        #expect(assertion.id.hasPrefix("id-"))
        #expect(assertion.signed.rawValue == String(name.dropFirst(7)))
        #expect(assertion.attributes.first { $0.name == "groups" }?.values == ["staff", "admins"])
        #expect(assertion.attributes.first { $0.friendlyName == "displayName" }?.values == ["Alice Example"])
        // Remembered until the latest NotOnOrAfter (five minutes after issue) plus the skew.
        #expect(assertion.expiresAt == (try Self.issued(xml)) + 5 * 60_000 + SAMLResponse.defaultClockSkew)
    }

    @Test("the clock may be a minute off either way")
    func skew() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        _ = try Self.validate(xml, try Self.expectation(for: xml, at: -59_000))
        _ = try Self.validate(xml, try Self.expectation(for: xml, at: 5 * 60_000 + 59_000))
    }

    @Test("a certificate for a key rollover: any configured certificate may have signed")
    func rollover() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.certificates = try Self.certificates("other-cert.pem") + Self.certificates()
        #expect(try Self.validate(xml, expectation).nameID == "alice@corp.example")
    }

    // MARK: Signatures

    @Test("a response whose signed content was changed is refused", arguments: ["signed-assertion", "signed-response", "signed-both"])
    func tampered(_ name: String) throws {
        let original = try Self.fixture(name + ".xml")
        let xml = original.replacing(">alice@corp.example<", with: ">mallory@corp.example<")
        #expect(xml != original)
        #expect(Self.refusal(xml, try Self.expectation(for: xml)).contains("signature does not verify"))
        let attribute = original.replacing(">admins<", with: ">owners<")
        #expect(Self.refusal(attribute, try Self.expectation(for: attribute)).contains("signature does not verify"))
    }

    @Test("an unsigned response is refused")
    func unsigned() throws {
        let xml = try Self.fixture("unsigned.xml")
        #expect(Self.refusal(xml, try Self.expectation(for: xml)).contains("neither the response nor its assertion is signed"))
    }

    @Test("a signature of another key is refused, whatever KeyInfo it carries")
    func otherKey() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.certificates = try Self.certificates("other-cert.pem")
        #expect(Self.refusal(xml, expectation).contains("does not verify with the IdP's certificate"))
    }

    @Test("RSA-SHA1 signatures are refused")
    func sha1() throws {
        let xml = try Self.fixture("signed-assertion-sha1.xml")
        #expect(Self.refusal(xml, try Self.expectation(for: xml)).contains("RSA or ECDSA with SHA-256"))
    }

    @Test("a signed response's assertion changed is refused, though the assertion itself is unsigned")
    func responseSignatureCoversAssertion() throws {
        let xml = try Self.fixture("signed-response.xml").replacing(">staff<", with: ">owners<")
        #expect(Self.refusal(xml, try Self.expectation(for: xml)).contains("response's signature does not verify"))
    }

    @Test("a present signature must verify even when the other one does")
    func bothMustVerify() throws {
        // Changing the response's Destination breaks the response signature only.
        let xml = try Self.fixture("signed-both.xml").replacing(
            #"Destination="https://links.test.example/__/auth/handler""#,
            with: #"Destination="https://links.test.example/__/auth/handler ""#)
        var expectation = try Self.expectation(for: xml)
        expectation.assertionConsumerServiceURL = Self.acs + " "
        #expect(Self.refusal(xml, expectation).contains("response's signature does not verify"))
    }

    // MARK: Conditions

    @Test("an expired assertion is refused")
    func expired() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        #expect(Self.refusal(xml, try Self.expectation(for: xml, at: 5 * 60_000 + 61_000)).contains("expired"))
    }

    @Test("an assertion from the future is refused")
    func notYetValid() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        #expect(Self.refusal(xml, try Self.expectation(for: xml, at: -61_000)).contains("not valid yet"))
    }

    @Test("an assertion for another audience is refused")
    func audience() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.serviceProvider = "https://other.test.example"
        #expect(Self.refusal(xml, expectation).contains("another audience (https://links.test.example)"))
    }

    @Test("a response for another ACS URL is refused (Destination, then Recipient)")
    func recipient() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.assertionConsumerServiceURL = "https://other.test.example/__/auth/handler"
        #expect(Self.refusal(xml, expectation).contains("another destination"))
        // Without the (unsigned) Destination, the signed Recipient still refuses it.
        let bare = xml.replacing(#" Destination="https://links.test.example/__/auth/handler""#, with: "")
        #expect(Self.refusal(bare, expectation).contains("another recipient"))
        #expect(try Self.validate(bare, try Self.expectation(for: bare)).nameID == "alice@corp.example")
    }

    @Test("a response to another request is refused")
    func inResponseTo() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.requestID = "_ffff"
        #expect(Self.refusal(xml, expectation).contains("answers another request"))
        // InResponseTo removed from the response and the assertion: the signed confirmation no longer verifies.
        let bare = xml.replacing(#" InResponseTo="\#(Self.requestID)""#, with: "")
        #expect(Self.refusal(bare, try Self.expectation(for: bare)).contains("signature does not verify"))
    }

    @Test("an assertion from another IdP is refused")
    func issuer() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        var expectation = try Self.expectation(for: xml)
        expectation.identityProvider = "https://other-idp.test.example"
        #expect(Self.refusal(xml, expectation).contains("another identity provider"))
    }

    @Test("an error status is refused with the IdP's status")
    func status() throws {
        let xml = try Self.fixture("signed-response.xml").replacing(
            #"<ns0:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>"#,
            with:
                #"<ns0:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><ns0:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></ns0:StatusCode><ns0:StatusMessage>no</ns0:StatusMessage>"#
        )
        #expect(Self.refusal(xml, try Self.expectation(for: xml)) == "the identity provider answered Responder (AuthnFailed): no")
    }

    // MARK: Malformed

    @Test("what is not a SAML response is refused")
    func malformed() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        let expectation = try Self.expectation(for: xml)
        #expect(throws: SAMLRejection("the SAMLResponse is not base64")) { try SAMLResponse.validate("%%%", expectation) }
        #expect(throws: SAMLRejection("the SAMLResponse is not base64")) { try SAMLResponse.validate("QUJD\u{0}", expectation) }
        #expect(Self.refusal("<a", expectation) == "the SAMLResponse is not well-formed XML")
        #expect(Self.refusal("<a/>", expectation) == "the document is not a SAML 2.0 protocol Response")
        let dtd = xml.replacing(#"<?xml version="1.0"?>"#, with: #"<?xml version="1.0"?><!DOCTYPE x [<!ATTLIST x ID ID #IMPLIED>]>"#)
        #expect(Self.refusal(dtd, expectation).contains("DOCTYPE"))
        let noAssertion =
            #"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="r" Version="2.0"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:Response>"#
        #expect(Self.refusal(noAssertion, expectation) == "Missing assertion in SAMLResponse.")
        let encrypted = xml.replacing("<ns1:AuthnStatement", with: "<ns1:EncryptedAssertion/><ns1:AuthnStatement")
        #expect(Self.refusal(encrypted, expectation).contains("encrypted"))
    }

    // MARK: XML signature wrapping

    /// A `ds:Signature` element (the fixtures write it on one line, without nesting).
    static var signaturePattern: Regex<Substring> { #/<ns2:Signature .*?</ns2:Signature>/#.dotMatchesNewlines() }

    /// The signed assertion of a fixture, as text.
    static func assertion(in xml: String) throws -> String {
        let start = try #require(xml.firstRange(of: "<ns1:Assertion "))
        let end = try #require(xml.firstRange(of: "</ns1:Assertion>"))
        return String(xml[start.lowerBound..<end.upperBound])
    }

    /// An attacker's assertion made from the signed one: another NameID and ID, signature removed.
    static func evil(from assertion: String, id: String = "id-evil") throws -> String {
        var evil = assertion.replacing(">alice@corp.example<", with: ">mallory@corp.example<")
        let idRange = try #require(evil.firstRange(of: #/ID="id-[^"]+"/#))
        evil.replaceSubrange(idRange, with: #"ID="\#(id)""#)
        if let signature = evil.firstRange(of: signaturePattern) { evil.removeSubrange(signature) }
        return evil
    }

    @Test("an unsigned assertion beside the signed one is refused (XSW: before, after, in Extensions, in the signature's Object)")
    func wrappedBeside() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        let signed = try Self.assertion(in: xml)
        let evil = try Self.evil(from: signed)
        let variants = [
            xml.replacing(signed, with: evil + signed),
            xml.replacing(signed, with: signed + evil),
            xml.replacing("<ns0:Status>", with: "<ns0:Extensions>\(evil)</ns0:Extensions><ns0:Status>"),
            xml.replacing("</ns2:KeyInfo>", with: "</ns2:KeyInfo><ns2:Object>\(evil)</ns2:Object>"),
        ]
        for variant in variants {
            #expect(Self.refusal(variant, try Self.expectation(for: xml)) == "the response must hold exactly one assertion, as its child")
        }
    }

    @Test("the signed assertion moved away and an unsigned one in its place is refused (XSW: the signature still verifies the original)")
    func wrappedMoved() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        let signed = try Self.assertion(in: xml)
        let evil = try Self.evil(from: signed)
        // The original inside the evil assertion's Subject (or Advice): the one at the top is unsigned.
        let inside = evil.replacing("</ns1:Subject>", with: "</ns1:Subject><ns1:Advice>\(signed)</ns1:Advice>")
        #expect(Self.refusal(xml.replacing(signed, with: inside), try Self.expectation(for: xml)).contains("exactly one assertion"))
        // The original's signature moved into the evil assertion: its Reference names another ID.
        let signature = String(signed[try #require(signed.firstRange(of: Self.signaturePattern))])
        let resigned = evil.replacing("<ns1:Subject>", with: signature + "<ns1:Subject>")
        #expect(
            Self.refusal(xml.replacing(signed, with: resigned), try Self.expectation(for: xml))
                .contains("signature does not sign the assertion"))
    }

    @Test("an unsigned assertion with the signed one's ID is refused (duplicate IDs)")
    func duplicateID() throws {
        let xml = try Self.fixture("signed-assertion.xml")
        let signed = try Self.assertion(in: xml)
        let id = String(signed[try #require(signed.firstRange(of: #/id-[A-Za-z0-9]+/#))])
        // The evil assertion takes the signed one's ID and the original hides in the response's Extensions under it.
        let evil = try Self.evil(from: signed, id: id)
        let variant = xml.replacing(signed, with: evil)
            .replacing("<ns0:Status>", with: "<ns0:Extensions><x ID=\"\(id)\"/></ns0:Extensions><ns0:Status>")
        #expect(Self.refusal(variant, try Self.expectation(for: xml)).contains("used twice"))
        let xmlID = xml.replacing("<ns0:Status>", with: "<ns0:Status xml:id=\"\(id)\">")
        #expect(Self.refusal(xmlID, try Self.expectation(for: xml)).contains("xml:id"))
    }

    @Test("a signed response wrapped in an unsigned one is refused")
    func wrappedResponse() throws {
        let xml = try Self.fixture("signed-response.xml")
        let body = String(xml[try #require(xml.firstRange(of: "<ns0:Response ")).lowerBound...])
        let signed = try Self.assertion(in: xml)
        let evil = try Self.evil(from: signed)
        let outer = body.replacing(signed, with: evil)
        var wrapped = outer
        wrapped.removeSubrange(try #require(outer.firstRange(of: Self.signaturePattern)))
        // Outer response (evil, no signature) with the signed original inside its Extensions.
        var variant = wrapped
        variant.replaceSubrange(try #require(variant.firstRange(of: #"ID="id-"#)), with: #"ID="outer-id-"#)
        variant = variant.replacing("<ns0:Status>", with: "<ns0:Extensions>\(body)</ns0:Extensions><ns0:Status>", maxReplacements: 1)
        #expect(Self.refusal(variant, try Self.expectation(for: xml)).contains("exactly one assertion"))
    }

    @Test("a comment inside the signed NameID neither breaks the signature nor cuts the NameID short")
    func commentInNameID() throws {
        let xml = try Self.fixture("signed-assertion.xml").replacing(
            ">alice@corp.example<", with: ">alice@corp<!-- injected -->.example<")
        #expect(try Self.validate(xml, try Self.expectation(for: xml)).nameID == "alice@corp.example")
    }
}
