internal import ActionLinksOpenSSL

/// RSA PKCS #1 v1.5 signatures of SHA-256 digests (RS256) made by OpenSSL's libcrypto.
///
/// The same signatures as swift-crypto's (PKCS #1 v1.5 is deterministic: byte for byte the same
/// for one key and message), made where the CPU signs fastest: OpenSSL 3 has an AVX-512 IFMA path
/// for RSA-2048 that BoringSSL lacks, about twice as fast where the CPU has it (Intel since Ice
/// Lake, AMD since Zen 4), and no slower where it does not. ID tokens are the server's most
/// frequent signature (every sign-in and every hourly refresh), so this is the signer that counts.
///
/// The key is read once (`ActionLinksOpenSSL`, a few C functions over libcrypto); each signature
/// works on a copy of a context prepared once, so signing threads share nothing mutable.
final class OpenSSLRSASigner: @unchecked Sendable {
    private let signer: OpaquePointer
    /// The signature's length in bytes (the modulus's).
    let signatureLength: Int

    /// The private key in `pem` (PKCS #1 or PKCS #8, unencrypted).
    init(pem: String) throws(OpenSSLError) {
        var error = [CChar](repeating: 0, count: 320)
        let bytes = Array(pem.utf8)
        let made = bytes.withUnsafeBufferPointer { pem in
            pem.withMemoryRebound(to: CChar.self) { actionlinks_rsa_signer_new($0.baseAddress, $0.count, &error, error.count) }
        }
        guard let made else { throw OpenSSLError(error) }
        signer = made
        signatureLength = actionlinks_rsa_signer_length(made)
    }

    deinit { actionlinks_rsa_signer_free(signer) }

    /// The signature of a SHA-256 digest (32 bytes), appended to `output`.
    func sign(digest: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(OpenSSLError) {
        precondition(digest.count == 32, "RS256 signs a SHA-256 digest")
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: signatureLength))
        var error = [CChar](repeating: 0, count: 320)
        let signed = output.withUnsafeMutableBufferPointer { buffer in
            actionlinks_rsa_signer_sign(
                signer, digest.baseAddress!.assumingMemoryBound(to: UInt8.self), digest.count, buffer.baseAddress! + start,
                signatureLength, &error, error.count)
        }
        guard signed == 1 else {
            output.removeSubrange(start...)
            throw OpenSSLError(error)
        }
    }
}

/// What OpenSSL reported.
struct OpenSSLError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }

    init(message: String) { self.message = message }

    /// The message a C function wrote.
    init(_ text: [CChar]) {
        message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
