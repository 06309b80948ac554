internal import ActionLinksXMLSec

/// An identity provider's signing certificate (X.509, DER): the only key its responses are
/// checked with (the KeyInfo a response carries is never trusted).
public struct SAMLCertificate: Sendable, Hashable {
    /// The certificate's DER bytes.
    public var der: [UInt8]

    /// A certificate from its DER bytes; `nil` when xmlsec (OpenSSL) cannot read a public key from it.
    public init?(der: [UInt8]) {
        guard XMLSecurity.status == 0, !der.isEmpty,
            der.withUnsafeBufferPointer({ actionlinks_xmlsec_certificate_loads($0.baseAddress, $0.count) }) == 1
        else { return nil }
        self.der = der
    }

    /// The certificates of PEM text (`-----BEGIN CERTIFICATE-----` blocks; several for a key
    /// rollover). Throws a rejection naming the first block that is not a readable certificate, or
    /// when there is none.
    public static func certificates(pem text: String) throws(SAMLRejection) -> [SAMLCertificate] {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var found: [SAMLCertificate] = []
        var rest = Substring(text)
        while let start = rest.firstRange(of: begin) {
            guard let stop = rest[start.upperBound...].firstRange(of: end) else {
                throw SAMLRejection("certificate \(found.count + 1) has no '\(end)' line")
            }
            guard let der = SAMLBase64.decode(String(rest[start.upperBound..<stop.lowerBound])) else {
                throw SAMLRejection("certificate \(found.count + 1) is not base64 between its BEGIN and END lines")
            }
            guard let certificate = SAMLCertificate(der: der) else {
                throw SAMLRejection("certificate \(found.count + 1) is not an X.509 certificate with a public key that OpenSSL can read")
            }
            found.append(certificate)
            rest = rest[stop.upperBound...]
        }
        guard !found.isEmpty else { throw SAMLRejection("expected a PEM certificate ('\(begin)' ... '\(end)')") }
        return found
    }
}
