import Crypto
import Foundation

/// The keys of sign-in codes (``SignInCodes``), each of its own purpose, derived from the form key
/// with HKDF-SHA-256 as ``SignedToken``'s are (so none of them can stand in for another's):
///
/// - **the code**: the digits of a link are a function of its `oobCode` under a key, so the mail,
///   the landing page and the admin's answer give the same digits without the digits ever being
///   stored, and the front of a Firebase project can derive them from Google's `oobCode` too;
/// - **the MAC** that the store keeps of (tenant, address, code), compared in constant time;
/// - **the sealing key** of the link: AES-256-GCM under a key derived from this server key *and the
///   code*, with the tenant and address authenticated, so a copy of the database (or a backup)
///   yields neither the code nor a usable link.
///
/// The form key is stable (it is not rotated), so codes issued before a restart stay valid.
struct SignInCodeKeys: Sendable {
    /// HMAC-SHA-256 of an `oobCode`, whose first 128 bits make the digits.
    private let digitsMAC: HMAC<SHA256>
    /// HMAC-SHA-256 of (tenant, address, code), as stored.
    private let entryMAC: HMAC<SHA256>
    /// The input key of each link's sealing key (with the code as HKDF's salt).
    private let sealing: SymmetricKey

    init(formKey: SymmetricKey) {
        func derived(_ purpose: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: formKey, info: Data(("actionlinks sign-in code: " + purpose).utf8), outputByteCount: 32)
        }
        digitsMAC = HMAC<SHA256>(key: derived("digits"))
        entryMAC = HMAC<SHA256>(key: derived("MAC"))
        sealing = derived("link sealing")
    }

    /// The `digits`-digit code of a link whose code is `oobCode`: the first 128 bits of an HMAC
    /// of it, as a number, reduced modulo 10^digits (leading zeros kept). With 128 bits, the
    /// reduction's bias is below 10^10 / 2^128 ≈ 3·10^-29: every code is as likely as every other.
    func code(oobCode: String, digits: Int) -> String {
        precondition((1...18).contains(digits), "a code of 1 to 18 digits")
        var mac = digitsMAC
        mac.update(data: Data(oobCode.utf8))
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        // Byte by byte: the remainder stays below 10^18 < 2^60, so shifting in a byte (2^8) cannot
        // overflow for the 10 digits a code has at most (10^10 · 2^8 < 2^42).
        var remainder: UInt64 = 0
        for byte in Array(mac.finalize()).prefix(16) { remainder = (remainder << 8 | UInt64(byte)) % modulus }
        let text = String(remainder)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// HMAC-SHA-256 of (tenant, address, code), each preceded by its length.
    func mac(tenantID: String, email: String, code: String) -> Data {
        var mac = entryMAC
        mac.update(data: Self.framed([tenantID, email, code]))
        return Data(mac.finalize())
    }

    /// The key a link is sealed with for (tenant, address, code): HKDF-SHA-256 of the sealing key,
    /// salted with the code, for the tenant and address.
    func sealingKey(tenantID: String, email: String, code: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: sealing, salt: Data(code.utf8), info: Self.framed([tenantID, email]), outputByteCount: 32)
    }

    /// The link sealed with `key` (AES-256-GCM, a random nonce; the tenant and address authenticated):
    /// the nonce, the ciphertext and the tag, in one value.
    func seal(_ link: String, with key: SymmetricKey, tenantID: String, email: String) throws -> Data {
        guard let combined = try AES.GCM.seal(Data(link.utf8), using: key, authenticating: Self.framed([tenantID, email])).combined
        else { throw CryptoKitError.incorrectParameterSize }
        return combined
    }

    /// The link `sealed` holds, or `nil` when `key`, the tenant or the address is not the one it
    /// was sealed for (or the value was changed).
    func open(_ sealed: Data, with key: SymmetricKey, tenantID: String, email: String) -> String? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let link = try? AES.GCM.open(box, using: key, authenticating: Self.framed([tenantID, email]))
        else { return nil }
        return String(data: link, encoding: .utf8)
    }

    /// Each value preceded by its UTF-8 length (four bytes, big-endian), so no two lists of values
    /// frame the same bytes.
    static func framed(_ values: [String]) -> Data {
        var data = Data()
        for value in values {
            let bytes = Data(value.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        return data
    }
}
