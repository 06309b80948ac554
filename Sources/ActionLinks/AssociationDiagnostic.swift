/// One finding about an association file: a stable code to branch on, where it is, and how to fix it.
public struct AssociationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier; an open set of static members so new checks never break existing `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The identifier as printed and stored, e.g. `aasa.invalid-app-id`.
        public let rawValue: String

        /// Creates a code; prefer the static members.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The raw value.
        public var description: String { rawValue }
    }

    /// How much a finding matters.
    public enum Severity: String, Sendable, Hashable {
        /// The platform will reject or ignore something the author meant to work.
        case error
        /// Works, but probably not as intended, or fragile.
        case warning
    }

    /// What was found.
    public let code: Code
    /// How bad it is.
    public let severity: Severity
    /// JSON path of the offending value, e.g. `applinks.details[0].components[2]["?"]["ref"]`; "" is the whole file.
    public let path: String
    /// What is wrong and how to fix it.
    public let message: String

    /// Creates a diagnostic; validators are the usual source.
    public init(_ code: Code, _ severity: Severity, at path: String, _ message: String) {
        self.code = code
        self.severity = severity
        self.path = path
        self.message = message
    }

    /// `error[aasa.invalid-app-id] applinks.details[0].appIDs[1]: …`.
    public var description: String {
        "\(severity.rawValue)[\(code.rawValue)] \(path.isEmpty ? "(file)" : path): \(message)"
    }
}

extension AssociationDiagnostic.Code {
    /// The bytes are not strict RFC 8259 JSON; the message carries line and column.
    public static let invalidJSON = Self("json.syntax")
    /// The file starts with a UTF-8 byte order mark.
    public static let byteOrderMark = Self("json.byte-order-mark")
    /// An object repeats a key; platforms keep only one of the values.
    public static let duplicateKey = Self("json.duplicate-key")
    /// The file exceeds the platform's size limit.
    public static let fileTooLarge = Self("file.too-large")
    /// A key the platform does not know, usually a misspelling; the platform ignores it.
    public static let unknownKey = Self("schema.unknown-key")
    /// A known key holds a value of the wrong JSON type.
    public static let wrongType = Self("schema.wrong-type")
    /// A `?` dictionary value is not a string, which voids the dictionary.
    public static let nonStringQueryPredicate = Self("rule.non-string-query-predicate")
    /// An earlier catch-all rule decides every URL, so this rule is never evaluated.
    public static let unreachableRule = Self("rule.unreachable")
}

/// A validation outcome: every finding plus what could still be used.
public struct AssociationValidationReport<Usable: Sendable & Hashable>: Sendable, Hashable {
    /// Findings in document order.
    public let diagnostics: [AssociationDiagnostic]
    /// The decoded content that the platform would still act on; nil when the bytes are not JSON at all.
    public let usable: Usable?

    /// Findings with severity `.error`.
    public var errors: [AssociationDiagnostic] { diagnostics.filter { $0.severity == .error } }
    /// Findings with severity `.warning`.
    public var warnings: [AssociationDiagnostic] { diagnostics.filter { $0.severity == .warning } }
    /// True when nothing at all was found.
    public var isClean: Bool { diagnostics.isEmpty }
}

/// Shared plumbing for the validators: JSON paths, raw-byte checks, key spelling.
struct DiagnosticCollector {
    var diagnostics: [AssociationDiagnostic] = []

    mutating func add(_ code: AssociationDiagnostic.Code, _ severity: AssociationDiagnostic.Severity, _ path: String, _ message: String) {
        diagnostics.append(AssociationDiagnostic(code, severity, at: path, message))
    }

    /// Size, BOM and syntax checks on raw bytes; returns the parsed document when there is one.
    mutating func parse(_ bytes: [UInt8], sizeLimit: Int, fileName: String) -> JSONValue? {
        if bytes.count > sizeLimit {
            add(
                .fileTooLarge, .error, "",
                "\(fileName) is \(bytes.count) bytes; the limit is \(sizeLimit) bytes (\(sizeLimit / 1024) KB). "
                    + "Remove rules or merge them with wildcards.")
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) {
            add(.byteOrderMark, .error, "", "\(fileName) starts with a UTF-8 byte order mark (EF BB BF); save it as UTF-8 without a BOM.")
            body = body.dropFirst(3)
        }
        do {
            let limits = JSONValue.ParseLimits(maximumByteCount: max(sizeLimit, bytes.count))
            let document = try JSONValue.parse(body, limits: limits)
            reportDuplicateKeys(document, at: "")
            return document
        } catch {
            add(.invalidJSON, .error, "", "\(fileName) is not valid JSON: \(error.description).")
            return nil
        }
    }

    private mutating func reportDuplicateKeys(_ value: JSONValue, at path: String) {
        switch value {
        case .object(let members):
            var seen: Set<String> = []
            for member in members {
                let memberPath = Self.path(path, key: member.key)
                if !seen.insert(member.key).inserted {
                    add(
                        .duplicateKey, .warning, memberPath,
                        "Key \"\(member.key)\" appears more than once; only the last value is used. Keep one.")
                }
                reportDuplicateKeys(member.value, at: memberPath)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() { reportDuplicateKeys(element, at: Self.path(path, index: index)) }
        default: break
        }
    }

    /// Reports every key outside `known`, suggesting the closest known key when one is plausibly meant.
    mutating func reportUnknownKeys(
        _ members: [JSONValue.Member], known: [String], at path: String, onlyNearMisses: Bool = false
    ) {
        for member in members where !known.contains(member.key) {
            let suggestion = Self.nearestKey(to: member.key, among: known)
            if onlyNearMisses, suggestion == nil { continue }
            let hint = suggestion.map { " Did you mean \"\($0)\"?" } ?? " Known keys: \(known.joined(separator: ", "))."
            add(.unknownKey, .warning, Self.path(path, key: member.key), "Unknown key \"\(member.key)\" is ignored.\(hint)")
        }
    }

    static func nearestKey(to key: String, among known: [String]) -> String? {
        let lowered = key.lowercased()
        let scored = known.map { ($0, editDistance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, key.count / 3) ? best.0 : nil
    }

    private static func editDistance(_ left: String, _ right: String) -> Int {
        let a = Array(left.unicodeScalars)
        let b = Array(right.unicodeScalars)
        var previous = Array(0...b.count)
        for i in a.indices {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for j in b.indices {
                let substitution = previous[j] + (a[i] == b[j] ? 0 : 1)
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Keys chosen by the file's author (query item names, variable names, app IDs) always use `["…"]`.
    static func path(_ base: String, dataKey key: String) -> String {
        var escaped = ""
        for character in key {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return "\(base)[\"\(escaped)\"]"
    }

    /// Schema keys read as `.key` when they are identifiers, else `["key"]`.
    static func path(_ base: String, key: String) -> String {
        let isIdentifier =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
            }
            && !("0"..."9").contains(key.unicodeScalars.first!)
        if isIdentifier { return base.isEmpty ? key : "\(base).\(key)" }
        return path(base, dataKey: key)
    }

    static func path(_ base: String, index: Int) -> String { "\(base)[\(index)]" }
}
