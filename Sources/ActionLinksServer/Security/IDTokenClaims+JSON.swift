/// The claims of an ID token as JSON, written directly: every refresh signs one, and `JSONEncoder`
/// (its containers, its key boxing, its escaping pass) was a tenth of a refresh's CPU beyond the
/// signature. The JSON holds the same members with the same values as `JSONEncoder`'s encoding of
/// ``IDTokenClaims/encode(to:)`` (in another order: a JWT's members have none), so any JSON reader
/// reads back the same claims; `HotPathTests` checks that on claims with every kind of text.
extension IDTokenClaims {
    /// The claims' JSON, or `nil` when they carry what only `JSONEncoder` writes here: developer
    /// claims or a SAML sign-in's attributes (arbitrary JSON values).
    var directJSON: [UInt8]? {
        guard custom.isEmpty, firebase.signInAttributes == nil else { return nil }
        var json = JSONBytes()
        json.bytes.reserveCapacity(512)
        json.open()
        json.member("iss", iss)
        json.member("aud", aud)
        json.member("auth_time", authTime)
        json.member("user_id", userID)
        json.member("sub", sub)
        json.member("iat", iat)
        json.member("exp", exp)
        if let email { json.member("email", email) }
        if let emailVerified {
            json.name("email_verified")
            json.bytes += emailVerified ? Array("true".utf8) : Array("false".utf8)
        }
        if let phoneNumber { json.member("phone_number", phoneNumber) }
        if let name { json.member("name", name) }
        if let picture { json.member("picture", picture) }
        if let providerID { json.member("provider_id", providerID) }
        json.name("firebase")
        json.open()
        json.name("identities")
        json.open()
        for (provider, values) in firebase.identities {
            json.name(provider)
            json.bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { json.bytes.append(UInt8(ascii: ",")) }
                json.string(value)
            }
            json.bytes.append(UInt8(ascii: "]"))
        }
        json.close()
        json.member("sign_in_provider", firebase.signInProvider)
        if let tenant = firebase.tenant { json.member("tenant", tenant) }
        json.close()
        json.close()
        return json.bytes
    }
}

/// A JSON object being written: members, strings escaped as RFC 8259 requires (`"`, `\` and the
/// control characters; everything else is UTF-8 as it is).
struct JSONBytes {
    var bytes: [UInt8] = []
    /// Whether the innermost open object has a member yet.
    private var hasMember = false

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        hasMember = false
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        hasMember = true
    }

    /// `"name":` after a comma where one is due.
    mutating func name(_ name: String) {
        if hasMember { bytes.append(UInt8(ascii: ",")) }
        hasMember = true
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func member(_ name: String, _ value: String) {
        self.name(name)
        string(value)
    }

    mutating func member(_ name: String, _ value: Int64) {
        self.name(name)
        bytes += String(value).utf8
    }

    private static let hex = Array("0123456789abcdef".utf8)

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                bytes += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)],
                    Self.hex[Int(byte & 0xF)],
                ]
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
