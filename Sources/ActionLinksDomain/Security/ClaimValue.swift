import Foundation

/// Any JSON value: developer claims (`customAttributes`, a custom token's `claims`) and a
/// provider's user info, carried as they were given.
public enum ClaimValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([ClaimValue])
    case object([String: ClaimValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([ClaimValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: ClaimValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .integer(let integer): try container.encode(integer)
        case .number(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// The text, for a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The members, for an object.
    public var objectValue: [String: ClaimValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// A JSON object's members, decoded from its text; `nil` when the text is not a JSON object.
    public static func object(json text: String) -> [String: ClaimValue]? {
        guard let value = try? JSONDecoder().decode(ClaimValue.self, from: Data(text.utf8)) else { return nil }
        return value.objectValue
    }

    /// Compact JSON with sorted keys.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// A coding key for any name: the claims an ID token carries beside Firebase's own.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
