import ActionLinks
import ActionLinksDomain
import Foundation

// The bodies of the Identity Toolkit REST calls this server answers, with Firebase's field names.
// Unknown fields are ignored; a field of the wrong type is `INVALID_ARGUMENT` naming the field.

/// A boolean as the SDKs send it: `true` / `false`, or the strings `"true"` / `"false"`.
struct LenientBool: Decodable, Sendable {
    let value: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            value = flag
        } else if let text = try? container.decode(String.self), text == "true" || text == "false" {
            value = text == "true"
        } else {
            throw DecodingError.typeMismatch(Bool.self, .init(codingPath: decoder.codingPath, debugDescription: "must be true or false"))
        }
    }
}

/// An Android version code, sent as a string or a number depending on the SDK: a whole number from
/// 0 to 2100000000 (Play's largest versionCode). It is shown on a page, so nothing else is accepted.
struct VersionCode: Decodable, Sendable {
    /// The code's digits, or `nil` for an empty string.
    let digits: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let problem = DecodingError.typeMismatch(
            Int.self,
            .init(codingPath: decoder.codingPath, debugDescription: "must be an Android version code: a whole number from 0 to 2100000000"))
        var text: String
        if let number = try? container.decode(Int.self) {
            text = String(number)
        } else if let string = try? container.decode(String.self) {
            text = string
        } else {
            throw problem
        }
        guard !text.isEmpty else {
            digits = nil
            return
        }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let code = Int(text), code <= 2_100_000_000
        else {
            throw problem
        }
        text = String(code)
        digits = text
    }
}

/// `requestType` by name (`PASSWORD_RESET`) or by number (`1`, as the Android SDK sends it).
struct RequestType: Decodable, Sendable {
    /// The numbers of Identity Toolkit's `OobReqType` enum.
    static let numbers: [Int: String] = [
        1: "PASSWORD_RESET", 4: "VERIFY_EMAIL", 5: "RECOVER_EMAIL", 6: "EMAIL_SIGNIN", 7: "VERIFY_AND_CHANGE_EMAIL",
        8: "REVERT_SECOND_FACTOR_ADDITION",
    ]
    /// The name given (or the name of the number given); empty when it was empty.
    let name: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            name = Self.numbers[number] ?? String(number)
        } else {
            name = try container.decode(String.self)
        }
    }
}

/// A string as the SDKs send it: a string, or a number (the Admin SDKs send `validSince` as one).
struct LenientString: Decodable, Sendable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            text = String(number)
        } else if let number = try? container.decode(Double.self) {
            // `Int64(exactly:)`, not `Int64(_:)`: a number beyond Int64 (1e300) is a bad request,
            // not a trap that takes the server down.
            guard let whole = Int64(exactly: number.rounded(.towardZero)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(number) is out of range")
            }
            text = String(whole)
        } else {
            text = try container.decode(String.self)
        }
    }
}

/// Firebase's error body: `{"error":{"code":400,"message":"CODE : detail","errors":[...]}}`.
struct ErrorBody: Encodable, Sendable {
    struct Detail: Encodable, Sendable {
        struct Item: Encodable, Sendable {
            var message: String
            var domain = "global"
            var reason: String
        }
        /// An item of `details`, as Google's API front end writes them (`@type` names the kind).
        enum GoogleDetail: Encodable, Sendable {
            case errorInfo(reason: String, domain: String, metadata: [String: String])
            case localizedMessage(locale: String, message: String)

            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case reason, domain, metadata, locale, message
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                switch self {
                case .errorInfo(let reason, let domain, let metadata):
                    try container.encode("type.googleapis.com/google.rpc.ErrorInfo", forKey: .type)
                    try container.encode(reason, forKey: .reason)
                    try container.encode(domain, forKey: .domain)
                    try container.encode(metadata, forKey: .metadata)
                case .localizedMessage(let locale, let message):
                    try container.encode("type.googleapis.com/google.rpc.LocalizedMessage", forKey: .type)
                    try container.encode(locale, forKey: .locale)
                    try container.encode(message, forKey: .message)
                }
            }
        }
        var code: Int
        var message: String
        var errors: [Item]
        var status: String?
        var details: [GoogleDetail]?
    }
    var error: Detail
}

/// Reads and writes the REST bodies.
enum IdentityToolkitJSON {
    /// Sorted keys and unescaped slashes, as Google's endpoint writes them.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Google's REST APIs take `snake_case` names as well as `camelCase` ones (`grant_type`).
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    static func encode(_ value: some Encodable) -> Data {
        if let plain = value as? any PlainJSONEncodable, let json = plain.plainJSON { return json }
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// Decodes a request body (empty: an empty object); malformed JSON is `INVALID_JSON`, a field of
    /// the wrong type `INVALID_ARGUMENT` naming it.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(ActionError) -> T {
        let data = data.isEmpty ? Data("{}".utf8) : data
        do {
            return try decoder.decode(type, from: data)
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch let DecodingError.valueNotFound(_, context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw ActionError.invalidArgument(Self.describe(context))
        } catch {
            throw ActionError(.invalidJSON, "Invalid JSON payload received: the body is not a JSON object")
        }
    }

    static func describe(_ context: DecodingError.Context) -> String {
        let field = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        let reason = context.debugDescription.hasPrefix("must ") ? context.debugDescription : "has the wrong type"
        return "'\(field.prefix(100))' \(reason)"
    }
}

/// An answer that can write its own JSON, byte for byte what ``IdentityToolkitJSON/encoder`` would
/// write, without `JSONEncoder` (the token refresh, which every signed-in client calls hourly);
/// ``IdentityToolkitJSON/encode(_:)`` takes it when it is given.
protocol PlainJSONEncodable {
    /// The JSON, or `nil` to let `JSONEncoder` write it (a value that would need escaping).
    var plainJSON: Data? { get }
}

/// Flat JSON objects of strings whose values need no escaping: printable ASCII without `"` and `\`
/// (`/` is written as it is, as ``IdentityToolkitJSON/encoder`` writes it).
enum PlainJSON {
    /// `{"name":"value",...}` with the members in the order given (sorted by the caller), or `nil`
    /// when a value holds anything else.
    static func object(_ members: [(String, String)]) -> Data? {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(members.reduce(2) { $0 + $1.0.utf8.count + $1.1.utf8.count + 6 })
        for (index, (name, value)) in members.enumerated() {
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
                return nil
            }
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: "\":\"".utf8)
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }
}
