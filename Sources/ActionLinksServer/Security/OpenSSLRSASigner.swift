import CLibCrypto

/// RSA PKCS #1 v1.5 signatures of SHA-256 digests (RS256) made by OpenSSL's libcrypto.
///
/// The same signatures as swift-crypto's (PKCS #1 v1.5 is deterministic: byte for byte the same
/// for one key and message), made where the CPU signs fastest: OpenSSL 3 has an AVX-512 IFMA path
/// for RSA-2048 that BoringSSL lacks, about twice as fast where the CPU has it (Intel since Ice
/// Lake, AMD since Zen 4), and no slower where it does not. ID tokens are the server's most
/// frequent signature (every sign-in and every hourly refresh), so this is the signer that counts.
///
/// The key is read once; each signature works on a copy of a context prepared once (padding and
/// digest set), so no algorithm is looked up per call and signing threads share nothing mutable.
final class OpenSSLRSASigner: @unchecked Sendable {
    /// `EVP_PKEY *`, owned.
    private let key: OpaquePointer
    /// `EVP_PKEY_CTX *` ready to sign (PKCS #1 v1.5, SHA-256), copied for each signature.
    private let prepared: OpaquePointer
    /// The signature's length in bytes (the modulus's).
    let signatureLength: Int

    /// The private key in `pem` (PKCS #1 or PKCS #8, unencrypted).
    init(pem: String) throws(OpenSSLError) {
        let bytes = Array(pem.utf8)
        let read: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key = read else { throw OpenSSLError.last("reading the PEM private key") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw OpenSSLError(message: "the PEM private key is not an RSA key")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            EVP_PKEY_free(key)
            throw OpenSSLError.last("making a signing context")
        }
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()) == 1
        else {
            EVP_PKEY_CTX_free(context)
            EVP_PKEY_free(key)
            throw OpenSSLError.last("preparing RS256 signatures")
        }
        self.key = key
        prepared = context
        signatureLength = Int(EVP_PKEY_get_size(key))
    }

    deinit {
        EVP_PKEY_CTX_free(prepared)
        EVP_PKEY_free(key)
    }

    /// The signature of a SHA-256 digest (32 bytes), appended to `output`.
    func sign(digest: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(OpenSSLError) {
        precondition(digest.count == 32, "RS256 signs a SHA-256 digest")
        guard let context = EVP_PKEY_CTX_dup(prepared) else { throw OpenSSLError.last("copying the signing context") }
        defer { EVP_PKEY_CTX_free(context) }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: signatureLength))
        var length = signatureLength
        let result = output.withUnsafeMutableBufferPointer { buffer in
            EVP_PKEY_sign(
                context, buffer.baseAddress! + start, &length, digest.baseAddress!.assumingMemoryBound(to: UInt8.self), digest.count)
        }
        guard result == 1, length == signatureLength else {
            output.removeSubrange(start...)
            throw OpenSSLError.last("signing")
        }
    }
}

/// What OpenSSL reported.
struct OpenSSLError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }

    /// `doing` failed, with OpenSSL's oldest queued error (and the queue cleared).
    static func last(_ doing: String) -> OpenSSLError {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return OpenSSLError(message: "OpenSSL failed \(doing)") }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return OpenSSLError(message: "OpenSSL failed \(doing): \(reason)")
    }
}
