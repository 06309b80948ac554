import Yams

/// The text of a scalar, for checks that word their own messages.
struct ScalarText: Decodable {
    /// The text; nil when the value is a list or a mapping.
    let text: String?
    /// Whether the text is YAML's null (`~`, `null` or nothing).
    let isNull: Bool

    init(from decoder: any Decoder) throws {
        if let decoder = decoder as? ConfigurationDecoder {
            let scalar = try decoder.scalar()
            text = scalar?.text
            isNull = scalar?.isNull ?? false
        } else {
            text = try decoder.singleValueContainer().decode(String.self)
            isNull = false
        }
    }

    /// `'text'`, or `a list or mapping`, for "got ..." in messages.
    var shown: String { text.map { "'\($0)'" } ?? "a list or mapping" }
}

/// Reading checked values from a section, each `nil` when neither the file nor the environment
/// gives one, and each problem located at its key.
extension KeyedDecodingContainer {
    /// A problem with the value at `key`.
    func problem(_ key: Key, _ message: String) -> DecodingProblem {
        DecodingProblem(codingPath + [key], message)
    }

    /// A problem with item `index` of the list at `key`.
    func problem(_ key: Key, index: Int, _ message: String) -> DecodingProblem {
        DecodingProblem(codingPath + [key, IndexKey(index)], message)
    }

    /// A problem with this section as a whole.
    func problem(_ message: String) -> DecodingProblem {
        DecodingProblem(codingPath, message)
    }

    /// The scalar at `key`, unchecked.
    func scalar(_ key: Key) throws -> ScalarText? {
        try decodeIfPresent(ScalarText.self, forKey: key)
    }

    /// A non-empty string.
    func string(_ key: Key) throws -> String? {
        guard let scalar = try scalar(key) else { return nil }
        guard let text = scalar.text, !text.isEmpty, !scalar.isNull else { throw problem(key, "expected a non-empty string") }
        return text
    }

    /// A whole number within `range`.
    func integer(_ key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let scalar = try scalar(key) else { return nil }
        guard let text = scalar.text, let value = Node(text).int, range.contains(value) else {
            throw problem(key, "expected a whole number from \(range.lowerBound) to \(range.upperBound); got \(scalar.shown)")
        }
        return value
    }

    /// `true` or `false`.
    func boolean(_ key: Key) throws -> Bool? {
        guard let scalar = try scalar(key) else { return nil }
        guard let text = scalar.text, let value = Node(text).bool else { throw problem(key, "expected true or false; got \(scalar.shown)") }
        return value
    }

    /// One of `Choice`'s raw values.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: Key, as type: Choice.Type) throws -> Choice?
    where Choice.RawValue == String {
        guard let scalar = try scalar(key) else { return nil }
        guard let text = scalar.text, let value = Choice(rawValue: text) else {
            throw problem(key, "expected \(Self.alternatives(Choice.allCases.map(\.rawValue))); got \(scalar.shown)")
        }
        return value
    }

    /// `90s`, `30m`, `1h`, `3d` or a number of seconds, within `range` (seconds); `kind` and
    /// `examples` word the error.
    func duration(
        _ key: Key, in range: ClosedRange<Int> = 1...(30 * 86400), kind: String = "a lifetime", examples: String = "90m, 1h or 3d"
    ) throws -> Int? {
        guard let scalar = try scalar(key) else { return nil }
        let text = scalar.text ?? ""
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var seconds: Int?
        if let last = text.last, let unit = units[last], let count = Int(text.dropLast()) {
            seconds = count * unit
        } else if let count = Int(text) {
            seconds = count
        }
        guard let seconds, range.contains(seconds) else {
            throw problem(
                key,
                "expected \(kind) from \(Self.spelled(range.lowerBound)) to \(Self.spelled(range.upperBound)) such as \(examples); got \(scalar.shown)"
            )
        }
        return seconds
    }

    /// A list of non-empty strings (empty when absent).
    func strings(_ key: Key) throws -> [String] {
        try decode([String].self, forKey: key)
    }

    /// `a`, `a or b`, `a, b or c`.
    static func alternatives(_ names: [String]) -> String {
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }

    /// `seconds` in the largest unit that divides it: `30d`, `1h`, `10m`, `45s`.
    static func spelled(_ seconds: Int) -> String {
        for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60)] where seconds % size == 0 { return "\(seconds / size)\(unit)" }
        return "\(seconds)s"
    }
}
