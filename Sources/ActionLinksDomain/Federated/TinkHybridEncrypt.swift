import Crypto
import Foundation

/// Encryption to the public key the Android SDK sends as `publicKey` when it opens
/// `/__/auth/handler`: a Tink keyset (binary protobuf, base64url) holding one ECIES-AEAD-HKDF public
/// key whose private half stays in the app's Android Keystore-protected `GenericIdpKeyset`. The
/// SDK's `GenericIdpActivity` decrypts the `link` extra of the intent that comes back with Tink's
/// `HybridDecrypt` (no context info) unless `encryptionEnabled` is false, so the provider's answer
/// never travels in the clear through the browser and the intent.
///
/// Tink's wire format, built here from swift-crypto's P-256, HKDF and AES-GCM:
/// output prefix (`0x01` + key ID for TINK, `0x00` + key ID for LEGACY/CRUNCHY, nothing for RAW),
/// the ephemeral public point (in the key's point format), then AES-GCM's IV (12 bytes),
/// ciphertext and tag, with the AEAD key HKDF(salt, ephemeral point ‖ ECDH x-coordinate, info "").
package struct TinkHybridEncrypt: Sendable {
    enum PointFormat: Sendable { case uncompressed, compressed }

    let keyID: UInt32
    let prefix: [UInt8]
    let recipient: P256.KeyAgreement.PublicKey
    let salt: [UInt8]
    let demKeySize: Int
    let pointFormat: PointFormat

    /// Why a `publicKey` was refused.
    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    static let publicKeyType = "type.googleapis.com/google.crypto.tink.EciesAeadHkdfPublicKey"
    static let aesGCMType = "type.googleapis.com/google.crypto.tink.AesGcmKey"

    /// Reads the base64url text of a binary Tink keyset (Android's `Base64.URL_SAFE`, which wraps
    /// lines; whitespace is ignored). Only what the SDK's template can hold is accepted: NIST P-256,
    /// HKDF-SHA256, an AES-GCM DEM of 16 or 32 bytes.
    package init(keyset text: String) throws(Invalid) {
        guard text.utf8.count <= 4096 else { throw Invalid(description: "the keyset is too long") }
        let compact = text.filter { !$0.isWhitespace }
        guard let bytes = Self.base64URLDecode(compact) else { throw Invalid(description: "the keyset is not base64url") }
        let keyset = try Self.fields(bytes)
        guard let primary = keyset.first(where: { $0.number == 1 })?.varint else {
            throw Invalid(description: "the keyset has no primary key ID")
        }
        var chosen: [Field]?
        for field in keyset where field.number == 2 {
            guard let data = field.bytes else { continue }
            let key = try Self.fields(data)
            if key.first(where: { $0.number == 3 })?.varint == primary { chosen = key }
        }
        guard let key = chosen else { throw Invalid(description: "the keyset has no primary key") }
        guard key.first(where: { $0.number == 2 })?.varint == 1 else { throw Invalid(description: "the primary key is not enabled") }
        keyID = UInt32(truncatingIfNeeded: primary)
        switch key.first(where: { $0.number == 4 })?.varint {
        case 1: prefix = [0x01] + Self.bigEndian(keyID)
        case 2, 4: prefix = [0x00] + Self.bigEndian(keyID)
        case 3: prefix = []
        default: throw Invalid(description: "unknown output prefix type")
        }
        guard let keyDataBytes = key.first(where: { $0.number == 1 })?.bytes else { throw Invalid(description: "no key data") }
        let keyData = try Self.fields(keyDataBytes)
        guard keyData.first(where: { $0.number == 1 })?.text == Self.publicKeyType,
            let publicKeyBytes = keyData.first(where: { $0.number == 2 })?.bytes
        else { throw Invalid(description: "the key is not an ECIES-AEAD-HKDF public key") }
        let publicKey = try Self.fields(publicKeyBytes)
        guard let paramsBytes = publicKey.first(where: { $0.number == 2 })?.bytes,
            let x = publicKey.first(where: { $0.number == 3 })?.bytes.flatMap({ Self.coordinate($0) }),
            let y = publicKey.first(where: { $0.number == 4 })?.bytes.flatMap({ Self.coordinate($0) })
        else { throw Invalid(description: "the public key has no parameters or point") }
        let params = try Self.fields(paramsBytes)
        guard let kemBytes = params.first(where: { $0.number == 1 })?.bytes,
            let demBytes = params.first(where: { $0.number == 2 })?.bytes
        else { throw Invalid(description: "the public key's parameters are incomplete") }
        let kem = try Self.fields(kemBytes)
        guard kem.first(where: { $0.number == 1 })?.varint == 2 else { throw Invalid(description: "the curve is not NIST P-256") }
        guard kem.first(where: { $0.number == 2 })?.varint == 3 else { throw Invalid(description: "the HKDF hash is not SHA-256") }
        salt = kem.first(where: { $0.number == 11 })?.bytes ?? []
        let dem = try Self.fields(demBytes)
        guard let templateBytes = dem.first(where: { $0.number == 2 })?.bytes else { throw Invalid(description: "no DEM template") }
        let template = try Self.fields(templateBytes)
        guard template.first(where: { $0.number == 1 })?.text == Self.aesGCMType,
            let formatBytes = template.first(where: { $0.number == 2 })?.bytes,
            let size = try Self.fields(formatBytes).first(where: { $0.number == 2 })?.varint, size == 16 || size == 32
        else { throw Invalid(description: "the DEM is not AES-GCM with a 16- or 32-byte key") }
        demKeySize = Int(size)
        switch params.first(where: { $0.number == 3 })?.varint {
        case 1: pointFormat = .uncompressed
        case 2: pointFormat = .compressed
        default: throw Invalid(description: "unsupported point format")
        }
        do {
            recipient = try P256.KeyAgreement.PublicKey(x963Representation: [0x04] + x + y)
        } catch {
            throw Invalid(description: "the public key is not a point on P-256")
        }
    }

    /// The ciphertext of `plaintext`, base64url with padding (what Android's `Base64.URL_SAFE` reads).
    package func encrypt(_ plaintext: [UInt8]) throws -> String {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let shared = try ephemeral.sharedSecretFromKeyAgreement(with: recipient)
        let point: Data =
            switch pointFormat {
            case .uncompressed: ephemeral.publicKey.x963Representation
            case .compressed: ephemeral.publicKey.compressedRepresentation
            }
        var material = [UInt8](point)
        shared.withUnsafeBytes { material.append(contentsOf: $0) }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), salt: salt, info: [UInt8](), outputByteCount: demKeySize)
        let sealed = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: [UInt8]())
        let output = prefix + [UInt8](point) + [UInt8](sealed.nonce) + [UInt8](sealed.ciphertext) + [UInt8](sealed.tag)
        return Data(output).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    // MARK: Protocol buffers (only what a keyset uses: varints and length-delimited fields)

    struct Field {
        let number: UInt64
        let varint: UInt64?
        let bytes: [UInt8]?
        var text: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
    }

    static func fields(_ data: [UInt8]) throws(Invalid) -> [Field] {
        var fields: [Field] = []
        var index = 0
        func varint() throws(Invalid) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < data.count, shift < 64 {
                let byte = data[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw Invalid(description: "the keyset is not a protocol buffer")
        }
        while index < data.count {
            let tag = try varint()
            let number = tag >> 3
            switch tag & 7 {
            case 0:
                fields.append(Field(number: number, varint: try varint(), bytes: nil))
            case 2:
                let length = try varint()
                guard length <= UInt64(data.count - index) else { throw Invalid(description: "the keyset is not a protocol buffer") }
                fields.append(Field(number: number, varint: nil, bytes: Array(data[index..<index + Int(length)])))
                index += Int(length)
            case 1 where data.count - index >= 8: index += 8
            case 5 where data.count - index >= 4: index += 4
            default: throw Invalid(description: "the keyset is not a protocol buffer")
            }
        }
        return fields
    }

    /// A coordinate as Tink writes it (Java's `BigInteger.toByteArray`: a sign byte may lead, small
    /// values are shorter) as 32 bytes.
    static func coordinate(_ bytes: [UInt8]) -> [UInt8]? {
        let digits = Array(bytes.drop { $0 == 0 })
        guard digits.count <= 32 else { return nil }
        return [UInt8](repeating: 0, count: 32 - digits.count) + digits
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func base64URLDecode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
