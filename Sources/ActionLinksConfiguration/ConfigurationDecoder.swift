import Yams

/// A problem found while decoding, at a coding path. ``ActionLinksConfiguration`` turns it into a
/// ``ConfigurationError`` that names the file, line and column, or the environment variable, the
/// value came from.
struct DecodingProblem: Error {
    /// The key the problem is about, from the top of the file.
    var codingPath: [any CodingKey]
    /// What is wrong and what was expected.
    var message: String
    /// Where to point instead of at the value (an unknown key points at itself).
    var mark: Mark?

    init(_ codingPath: [any CodingKey], _ message: String, mark: Mark? = nil) {
        self.codingPath = codingPath
        self.message = message
        self.mark = mark
    }
}

/// A list position in a coding path.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "[\(intValue ?? 0)]" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// A mapping key that is not known in advance (a query parameter's name).
struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Decodes configuration types from a YAML node tree, taking each scalar (and list of scalars) from
/// its environment variable when that is set.
///
/// A mapping whose key type is `CaseIterable` refuses keys that are not among its cases, naming the
/// nearest; other key types (`NameKey`) take any name. A key missing from the file decodes as an
/// empty mapping or an empty list, so a section's variables are read even when the file omits the
/// section; a missing scalar that is required reads "<key> is required". `null` is an empty mapping
/// or list; where a scalar is expected it is a value like any other (and no string).
struct ConfigurationDecoder: Decoder {
    /// Where a value comes from.
    enum Value {
        /// A node of the file, or nil when the file does not have the key.
        case file(Node?)
        /// An item of a comma-separated list from an environment variable.
        case environment(String)
    }

    let value: Value
    let codingPath: [any CodingKey]
    let environment: ConfigurationEnvironment
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `server.port`, `continueUrls.allow[1]`, `providers[0].clientId`; nil at the top.
    static func describe(_ path: [any CodingKey]) -> String? {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return path.isEmpty ? nil : text
    }

    /// The text of a scalar: its environment variable's value when set, else the file's; nil when
    /// the value is a list or a mapping. `isNull` tells `~` and an empty value from text.
    func scalar() throws(DecodingProblem) -> (text: String, isNull: Bool)? {
        switch value {
        case .environment(let text):
            return (text, false)
        case .file(let node):
            if let last = codingPath.last, last.intValue == nil, let text = environment.value(for: codingPath) { return (text, false) }
            guard let node else {
                throw DecodingProblem(Array(codingPath.dropLast()), "\(codingPath.last?.stringValue ?? "a value") is required")
            }
            guard case .scalar(let scalar) = node else { return nil }
            return (scalar.string, node.null != nil)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let known = (Key.self as? any (CodingKey & CaseIterable).Type).map { Self.names(of: $0) }
        let expected = known.map { "expected a mapping of " + $0.joined(separator: ", ") } ?? "expected a mapping"
        var entries: [(name: String, value: Node)] = []
        switch value {
        case .environment:
            throw DecodingProblem(codingPath, expected)
        case .file(nil):
            break
        case .file(let node?):
            if case .scalar(let scalar) = node, scalar.string.isEmpty || node.null != nil { break }
            guard case .mapping(let mapping) = node else { throw DecodingProblem(codingPath, expected, mark: node.mark) }
            for (keyNode, valueNode) in mapping {
                guard let name = keyNode.scalar?.string else {
                    throw DecodingProblem(codingPath, "expected a plain key", mark: keyNode.mark)
                }
                let path = codingPath + [NameKey(stringValue: name)]
                if let known, !known.contains(name) {
                    var message = "unknown key; expected one of \(known.joined(separator: ", "))"
                    if let near = nearest(to: name, in: known, within: 3) { message += " (did you mean '\(near)'?)" }
                    throw DecodingProblem(path, message, mark: keyNode.mark)
                }
                entries.append((name, valueNode))
            }
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: entries))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        if let last = codingPath.last, last.intValue == nil, case .file = value, let items = environment.list(for: codingPath) {
            return UnkeyedContainer(decoder: self, items: items.map(Value.environment))
        }
        switch value {
        case .environment:
            throw DecodingProblem(codingPath, "expected a list")
        case .file(nil):
            return UnkeyedContainer(decoder: self, items: [])
        case .file(let node?):
            if case .scalar = node, node.null != nil { return UnkeyedContainer(decoder: self, items: []) }
            guard case .sequence(let sequence) = node else { throw DecodingProblem(codingPath, "expected a list", mark: node.mark) }
            return UnkeyedContainer(decoder: self, items: sequence.map { .file($0) })
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    func child(_ value: Value, at key: any CodingKey) -> ConfigurationDecoder {
        ConfigurationDecoder(value: value, codingPath: codingPath + [key], environment: environment)
    }

    private static func names<Key: CodingKey & CaseIterable>(of type: Key.Type) -> [String] {
        Key.allCases.map(\.stringValue)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ConfigurationDecoder
    let entries: [(name: String, value: Node)]

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool {
        node(key) != nil || decoder.environment.isSet(codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try T(from: child(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder.child(.file(nil), at: NameKey(stringValue: "super")) }

    func superDecoder(forKey key: Key) throws -> any Decoder { child(key) }

    private func node(_ key: Key) -> Node? {
        entries.first { $0.name == key.stringValue }?.value
    }

    private func child(_ key: Key) -> ConfigurationDecoder {
        decoder.child(.file(node(key)), at: key)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ConfigurationDecoder
    let items: [ConfigurationDecoder.Value]
    var currentIndex = 0

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try T(from: try next())
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try next().container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try next().unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = try next()
        currentIndex += 1
        return decoder
    }

    private func next() throws(DecodingProblem) -> ConfigurationDecoder {
        guard !isAtEnd else { throw DecodingProblem(codingPath, "expected more items") }
        return decoder.child(items[currentIndex], at: IndexKey(currentIndex))
    }
}

/// Plain values with plain messages; the sections check ranges and shapes with
/// ``ConfigurationValues`` for messages that say more.
private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ConfigurationDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let scalar = try decoder.scalar()
        let shown = scalar.map { "'\($0.text)'" } ?? "a list or mapping"
        if T.self == String.self {
            guard let scalar, !scalar.text.isEmpty, !scalar.isNull else { throw DecodingProblem(codingPath, "expected a non-empty string") }
            return scalar.text as! T
        }
        if T.self == Bool.self {
            guard let text = scalar?.text, let value = Node(text).bool else {
                throw DecodingProblem(codingPath, "expected true or false; got \(shown)")
            }
            return value as! T
        }
        if let integer = T.self as? any FixedWidthInteger.Type {
            guard let text = scalar?.text, let value = integer.init(text) else {
                throw DecodingProblem(codingPath, "expected a whole number; got \(shown)")
            }
            return value as! T
        }
        if let number = T.self as? any (BinaryFloatingPoint & LosslessStringConvertible).Type {
            guard let text = scalar?.text, let value = number.init(text) else {
                throw DecodingProblem(codingPath, "expected a number; got \(shown)")
            }
            return value as! T
        }
        return try T(from: decoder)
    }
}
