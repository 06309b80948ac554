internal import ActionLinksXMLSec

/// What a service provider expects of a `<samlp:Response>` (HTTP-POST binding): who must have
/// signed it, for whom, where and in answer to which request.
public struct SAMLExpectation: Sendable {
    /// The IdP's entity ID: the assertion's `Issuer` (and the response's, when it names one).
    public var identityProvider: String
    /// The IdP's signing certificates; the response or its assertion must be signed with one.
    public var certificates: [SAMLCertificate]
    /// This service provider's entity ID: an `Audience` of every `AudienceRestriction`.
    public var serviceProvider: String
    /// Where the response was posted: the `Destination` and the bearer confirmation's `Recipient`.
    public var assertionConsumerServiceURL: String
    /// The `ID` of the request this answers: `InResponseTo` (an unsolicited response is refused).
    public var requestID: String
    /// The time now (ms since 1970).
    public var now: Int64
    /// How far the IdP's clock may be from this one (ms).
    public var clockSkew: Int64

    public init(
        identityProvider: String, certificates: [SAMLCertificate], serviceProvider: String, assertionConsumerServiceURL: String,
        requestID: String, now: Int64, clockSkew: Int64 = SAMLResponse.defaultClockSkew
    ) {
        self.identityProvider = identityProvider
        self.certificates = certificates
        self.serviceProvider = serviceProvider
        self.assertionConsumerServiceURL = assertionConsumerServiceURL
        self.requestID = requestID
        self.now = now
        self.clockSkew = clockSkew
    }
}

/// A SAML attribute of the assertion: its `Name` and its values' text.
public struct SAMLAttribute: Sendable, Hashable {
    public var name: String
    public var friendlyName: String?
    public var values: [String]

    public init(name: String, friendlyName: String? = nil, values: [String]) {
        self.name = name
        self.friendlyName = friendlyName
        self.values = values
    }
}

/// What a checked response says: the signed assertion's content.
public struct SAMLAssertion: Sendable, Hashable {
    /// Which element carried the valid signature.
    public enum Signed: String, Sendable, Hashable {
        case response, assertion, both
    }

    /// The assertion's `ID` (one use only: see ``expiresAt``).
    public var id: String
    /// The IdP's entity ID.
    public var issuer: String
    /// The subject's `NameID`, trimmed.
    public var nameID: String
    /// The `NameID`'s `Format`, if given.
    public var nameIDFormat: String?
    /// The attribute statements' attributes, in order (one entry per `Attribute`).
    public var attributes: [SAMLAttribute]
    /// The `SessionIndex` of the authentication statement, if given.
    public var sessionIndex: String?
    /// Until when the assertion could be accepted (its latest `NotOnOrAfter`, plus the clock skew,
    /// in ms): how long its ID must be remembered as used.
    public var expiresAt: Int64
    public var signed: Signed
}

/// Checks a `<samlp:Response>` as a service provider must (SAML 2.0 Core, Profiles §4.1.4.3,
/// Bindings §3.5.5.2), with the XML signature checked by xmlsec:
///
/// - The document has no DOCTYPE; its root is one `Response`, status `Success`, with exactly one
///   `Assertion` (a direct child; an `EncryptedAssertion` is refused), and no `xml:id`.
/// - The response or the assertion (or both) carries an enveloped `ds:Signature` as a direct child,
///   with exactly one `Reference` whose URI is `#` and that element's `ID`, which is unique in the
///   document; it verifies with one of the configured certificates (RSA or ECDSA, SHA-256 or
///   stronger). A signature that is present must verify, whether or not the other one does.
/// - Everything read comes from the signed element: when only the assertion is signed, the
///   response's own fields can only make a refusal, never an acceptance.
/// - `Destination` (required on a signed response), `InResponseTo`, `Issuer`, a bearer
///   `SubjectConfirmationData` with the `Recipient`, `InResponseTo` and an unexpired `NotOnOrAfter`,
///   `Conditions` (`NotBefore`, `NotOnOrAfter`, every `AudienceRestriction` naming this SP), an
///   `AuthnStatement`, and a `NameID`.
public enum SAMLResponse {
    /// The clock skew allowed by default: one minute.
    public static let defaultClockSkew: Int64 = 60_000
    /// The largest response taken (decoded).
    public static let maximumBytes = 512 * 1024

    static let success = "urn:oasis:names:tc:SAML:2.0:status:Success"
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
    static let entityFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"

    /// The signature and digest algorithms accepted (the C shim enforces the same list).
    static let signatureAlgorithms: Set<String> = [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
    ]
    static let digestAlgorithms: Set<String> = [
        "http://www.w3.org/2001/04/xmlenc#sha256", "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    ]

    /// The `SAMLResponse` form field (base64 of the XML) checked against `expectation`.
    public static func validate(_ encoded: String, _ expectation: SAMLExpectation) throws(SAMLRejection) -> SAMLAssertion {
        guard XMLSecurity.status == 0 else { throw SAMLRejection("xmlsec could not be initialised (\(XMLSecurity.status))") }
        guard encoded.utf8.count <= maximumBytes * 4 / 3 + 4096 else {
            throw SAMLRejection("the SAMLResponse is larger than \(maximumBytes / 1024) KiB")
        }
        guard let bytes = SAMLBase64.decode(encoded) else { throw SAMLRejection("the SAMLResponse is not base64") }
        guard let document = XMLDocument(parsing: bytes) else { throw SAMLRejection("the SAMLResponse is not well-formed XML") }
        return try check(document, expectation)
    }

    static func check(_ document: XMLDocument, _ expected: SAMLExpectation) throws(SAMLRejection) -> SAMLAssertion {
        guard !document.hasDTD else { throw SAMLRejection("the response has a DOCTYPE, which SAML messages never have") }
        guard let response = document.root, response.is("Response", in: SAMLNamespace.protocol_) else {
            throw SAMLRejection("the document is not a SAML 2.0 protocol Response")
        }
        guard response.attribute("Version") == "2.0" else { throw SAMLRejection("the response is not SAML 2.0 (Version)") }
        try checkStatus(response)

        // The shape: one assertion, a direct child; IDs that cannot be confused.
        let everything = [response] + response.descendants
        if everything.contains(where: { $0.is("EncryptedAssertion", in: SAMLNamespace.assertion) }) {
            throw SAMLRejection(
                "the assertion is encrypted, which this server does not support: have the IdP send it unencrypted (over HTTPS)")
        }
        let assertions = everything.filter { $0.is("Assertion", in: SAMLNamespace.assertion) }
        guard assertions.count == 1, let assertion = assertions.first, assertion.parent?.node == response.node else {
            throw SAMLRejection(
                assertions.isEmpty ? "Missing assertion in SAMLResponse." : "the response must hold exactly one assertion, as its child")
        }
        if everything.contains(where: { !$0.attributes(in: SAMLNamespace.xml).filter { $0.0 == "id" }.isEmpty }) {
            throw SAMLRejection("the response has an xml:id attribute, which SAML messages never have")
        }
        guard let responseID = response.attribute("ID"), !responseID.isEmpty, let assertionID = assertion.attribute("ID"),
            !assertionID.isEmpty
        else { throw SAMLRejection("the response or its assertion has no ID") }
        let idCounts = Dictionary(
            everything.flatMap { element in ["ID", "Id", "id"].compactMap { element.attribute($0) } }.map { ($0, 1) }, uniquingKeysWith: +)
        guard responseID != assertionID, idCounts[responseID] == 1, idCounts[assertionID] == 1 else {
            throw SAMLRejection("an ID of the response or its assertion is used twice in the document")
        }
        guard actionlinks_xml_add_id(document.pointer, response.attributeNode("ID"), responseID) == 0,
            actionlinks_xml_add_id(document.pointer, assertion.attributeNode("ID"), assertionID) == 0
        else { throw SAMLRejection("an ID of the response or its assertion is used twice in the document") }

        // The signatures: each one present must verify; at least one must be there.
        let responseSigned = try verifySignature(of: response, id: responseID, what: "response", document: document, expected)
        let assertionSigned = try verifySignature(of: assertion, id: assertionID, what: "assertion", document: document, expected)
        guard responseSigned || assertionSigned else {
            throw SAMLRejection("neither the response nor its assertion is signed; the IdP must sign one of them")
        }

        // The response's own fields (signed or not, they can only refuse).
        if let destination = response.attribute("Destination") {
            guard destination == expected.assertionConsumerServiceURL else {
                throw SAMLRejection("the response is for another destination (\(destination.cut(200)))")
            }
        } else if responseSigned {
            throw SAMLRejection("the signed response has no Destination")
        }
        if let inResponseTo = response.attribute("InResponseTo"), inResponseTo != expected.requestID {
            throw SAMLRejection("the response answers another request (InResponseTo)")
        }
        if let issuer = response.child("Issuer", in: SAMLNamespace.assertion) {
            try checkIssuer(issuer, expected, what: "response")
        }

        // The assertion.
        guard assertion.attribute("Version") == "2.0" else { throw SAMLRejection("the assertion is not SAML 2.0 (Version)") }
        guard let issuer = assertion.child("Issuer", in: SAMLNamespace.assertion) else {
            throw SAMLRejection("the assertion has no Issuer")
        }
        try checkIssuer(issuer, expected, what: "assertion")
        guard let subject = assertion.child("Subject", in: SAMLNamespace.assertion) else {
            throw SAMLRejection("Missing assertion.subject in SAMLResponse.")
        }
        if subject.child("EncryptedID", in: SAMLNamespace.assertion) != nil {
            throw SAMLRejection("the NameID is encrypted, which this server does not support")
        }
        guard let nameIDElement = subject.child("NameID", in: SAMLNamespace.assertion) else {
            throw SAMLRejection("Missing assertion.subject.nameId in SAMLResponse.")
        }
        let nameID = nameIDElement.text.trimmed
        guard !nameID.isEmpty, nameIDElement.children.isEmpty else {
            throw SAMLRejection("Missing assertion.subject.nameId in SAMLResponse.")
        }
        var latest = try checkConfirmation(subject, expected)
        latest = max(latest, try checkConditions(assertion, expected))
        let statements = assertion.children("AuthnStatement", in: SAMLNamespace.assertion)
        guard let statement = statements.first else { throw SAMLRejection("the assertion has no AuthnStatement") }
        if let text = statement.attribute("SessionNotOnOrAfter") {
            guard let end = SAMLTime.milliseconds(text) else { throw SAMLRejection("SessionNotOnOrAfter is not a date and time") }
            guard expected.now < end + expected.clockSkew else { throw SAMLRejection("the IdP session of the assertion has ended") }
        }
        var attributes: [SAMLAttribute] = []
        for attributeStatement in assertion.children("AttributeStatement", in: SAMLNamespace.assertion) {
            if attributeStatement.child("EncryptedAttribute", in: SAMLNamespace.assertion) != nil {
                throw SAMLRejection("the assertion has encrypted attributes, which this server does not support")
            }
            for attribute in attributeStatement.children("Attribute", in: SAMLNamespace.assertion) {
                guard let name = attribute.attribute("Name"), !name.isEmpty else { throw SAMLRejection("an Attribute has no Name") }
                let values = attribute.children("AttributeValue", in: SAMLNamespace.assertion).filter { value in
                    !value.attributes(in: SAMLNamespace.schemaInstance).contains { $0 == ("nil", "true") || $0 == ("nil", "1") }
                }
                attributes.append(
                    SAMLAttribute(name: name, friendlyName: attribute.attribute("FriendlyName"), values: values.map(\.deepText)))
            }
        }
        return SAMLAssertion(
            id: assertionID, issuer: expected.identityProvider, nameID: nameID, nameIDFormat: nameIDElement.attribute("Format"),
            attributes: attributes, sessionIndex: statement.attribute("SessionIndex"), expiresAt: latest + expected.clockSkew,
            signed: responseSigned && assertionSigned ? .both : responseSigned ? .response : .assertion)
    }

    /// Refuses a response whose status is not `Success`, naming the IdP's status and message.
    static func checkStatus(_ response: XMLElement) throws(SAMLRejection) {
        guard let status = response.child("Status", in: SAMLNamespace.protocol_),
            let code = status.child("StatusCode", in: SAMLNamespace.protocol_), let value = code.attribute("Value")
        else { throw SAMLRejection("the response has no Status") }
        guard value == success else {
            var reason = "the identity provider answered " + short(value)
            if let inner = code.child("StatusCode", in: SAMLNamespace.protocol_)?.attribute("Value") { reason += " (\(short(inner)))" }
            if let message = status.child("StatusMessage", in: SAMLNamespace.protocol_)?.text, !message.isEmpty {
                reason += ": " + message.cut(200)
            }
            throw SAMLRejection(reason)
        }
    }

    /// The last part of a status URN (`Requester`, `AuthnFailed`).
    static func short(_ urn: String) -> String { String((urn.split(separator: ":").last ?? Substring(urn)).cut(100)) }

    static func checkIssuer(_ issuer: XMLElement, _ expected: SAMLExpectation, what: String) throws(SAMLRejection) {
        if let format = issuer.attribute("Format"), format != entityFormat {
            throw SAMLRejection("the \(what)'s Issuer is not an entity ID (Format \(format.cut(100)))")
        }
        let name = issuer.text.trimmed
        guard name == expected.identityProvider else {
            throw SAMLRejection("the \(what) comes from another identity provider (\(name.cut(200)))")
        }
    }

    /// Verifies the enveloped signature that is a direct child of `element`, if there is one:
    /// `true` when it verifies with a configured certificate, `false` when there is none; a
    /// signature that does not verify (or is shaped otherwise) is a refusal.
    static func verifySignature(
        of element: XMLElement, id: String, what: String, document: XMLDocument, _ expected: SAMLExpectation
    ) throws(SAMLRejection) -> Bool {
        let signatures = element.children("Signature", in: SAMLNamespace.signature)
        guard let signature = signatures.first else { return false }
        guard signatures.count == 1 else { throw SAMLRejection("the \(what) has more than one signature") }
        guard let signedInfo = signature.child("SignedInfo", in: SAMLNamespace.signature) else {
            throw SAMLRejection("the \(what)'s signature has no SignedInfo")
        }
        let references = signedInfo.children("Reference", in: SAMLNamespace.signature)
        guard references.count == 1, let reference = references.first else {
            throw SAMLRejection("the \(what)'s signature must have exactly one Reference")
        }
        guard reference.attribute("URI") == "#" + id else {
            throw SAMLRejection("the \(what)'s signature does not sign the \(what) (its Reference is not #\(id.cut(100)))")
        }
        let method = signedInfo.child("SignatureMethod", in: SAMLNamespace.signature)?.attribute("Algorithm") ?? ""
        guard signatureAlgorithms.contains(method) else {
            throw SAMLRejection(
                "the \(what) is signed with \(method.isEmpty ? "no SignatureMethod" : String(method.cut(100))); RSA or ECDSA with SHA-256, -384 or -512 is required"
            )
        }
        let digest = reference.child("DigestMethod", in: SAMLNamespace.signature)?.attribute("Algorithm") ?? ""
        guard digestAlgorithms.contains(digest) else {
            throw SAMLRejection(
                "the \(what)'s signature digests with \(digest.isEmpty ? "no DigestMethod" : String(digest.cut(100))); SHA-256, -384 or -512 is required"
            )
        }
        for certificate in expected.certificates {
            let result = certificate.der.withUnsafeBufferPointer { actionlinks_xmlsec_verify(signature.node, $0.baseAddress, $0.count) }
            if result == 1 { return true }
            if result == -2 { throw SAMLRejection("xmlsec failed while checking the \(what)'s signature") }
        }
        throw SAMLRejection("the \(what)'s signature does not verify with the IdP's certificate")
    }

    /// Finds a bearer `SubjectConfirmation` that holds for this request and recipient, and
    /// returns its `NotOnOrAfter`; otherwise refuses with what was wrong with the first one.
    static func checkConfirmation(_ subject: XMLElement, _ expected: SAMLExpectation) throws(SAMLRejection) -> Int64 {
        var first: SAMLRejection?
        for confirmation in subject.children("SubjectConfirmation", in: SAMLNamespace.assertion)
        where confirmation.attribute("Method") == bearer {
            do throws(SAMLRejection) {
                guard let data = confirmation.child("SubjectConfirmationData", in: SAMLNamespace.assertion) else {
                    throw SAMLRejection("the bearer confirmation has no SubjectConfirmationData")
                }
                guard data.attribute("Recipient") == expected.assertionConsumerServiceURL else {
                    throw SAMLRejection("the assertion is for another recipient (\(data.attribute("Recipient")?.cut(200) ?? "none"))")
                }
                guard data.attribute("InResponseTo") == expected.requestID else {
                    throw SAMLRejection("the assertion answers another request (InResponseTo)")
                }
                guard let text = data.attribute("NotOnOrAfter"), let end = SAMLTime.milliseconds(text) else {
                    throw SAMLRejection("the bearer confirmation has no NotOnOrAfter")
                }
                guard expected.now < end + expected.clockSkew else {
                    throw SAMLRejection("the assertion has expired (NotOnOrAfter \(text))")
                }
                if let text = data.attribute("NotBefore") {
                    guard let start = SAMLTime.milliseconds(text), expected.now + expected.clockSkew >= start else {
                        throw SAMLRejection("the assertion is not valid yet (NotBefore \(text.cut(40)))")
                    }
                }
                return end
            } catch {
                if first == nil { first = error }
            }
        }
        throw first ?? SAMLRejection("the assertion has no bearer SubjectConfirmation")
    }

    /// Checks `Conditions` (required): its validity window and that every audience restriction
    /// names this SP. Returns its `NotOnOrAfter` (or 0).
    static func checkConditions(_ assertion: XMLElement, _ expected: SAMLExpectation) throws(SAMLRejection) -> Int64 {
        guard let conditions = assertion.child("Conditions", in: SAMLNamespace.assertion) else {
            throw SAMLRejection("the assertion has no Conditions")
        }
        if let text = conditions.attribute("NotBefore") {
            guard let start = SAMLTime.milliseconds(text) else { throw SAMLRejection("NotBefore is not a date and time") }
            guard expected.now + expected.clockSkew >= start else {
                throw SAMLRejection("the assertion is not valid yet (NotBefore \(text))")
            }
        }
        var end: Int64 = 0
        if let text = conditions.attribute("NotOnOrAfter") {
            guard let parsed = SAMLTime.milliseconds(text) else { throw SAMLRejection("NotOnOrAfter is not a date and time") }
            guard expected.now < parsed + expected.clockSkew else {
                throw SAMLRejection("the assertion has expired (NotOnOrAfter \(text))")
            }
            end = parsed
        }
        let restrictions = conditions.children("AudienceRestriction", in: SAMLNamespace.assertion)
        guard !restrictions.isEmpty else { throw SAMLRejection("the assertion has no AudienceRestriction") }
        for restriction in restrictions {
            let audiences = restriction.children("Audience", in: SAMLNamespace.assertion).map {
                $0.text.trimmed
            }
            guard audiences.contains(expected.serviceProvider) else {
                throw SAMLRejection("the assertion is for another audience (\(audiences.joined(separator: ", ").cut(200)))")
            }
        }
        return end
    }
}
