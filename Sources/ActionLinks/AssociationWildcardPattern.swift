/// A compiled universal-link pattern (`*`, `?`, `?*` and `$(name)` variables), matched without backtracking.
///
/// Matching runs a set-of-positions simulation: after each token we keep every input offset the prefix of the
/// pattern can end at. Each token costs O(input), so a whole match is O(pattern × input) even for adversarial
/// patterns such as `*a*a*a*a*b`, which make naive backtracking exponential.
struct AssociationWildcardPattern: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal(Unicode.Scalar)
        case anyCharacter
        case anyRun
        case characterClass(PredefinedSubstitutionVariables.CharacterClass)
        /// A substitution variable: exactly one of the listed alternatives, each itself a variable-free pattern.
        case alternatives([[Token]])
        /// A variable nobody defined; it can match nothing, so the rule is dead and validation says so.
        case undefinedVariable(String)
    }

    let tokens: [Token]
    let source: String

    /// Compiles `source`; `variables` nil means `$(` is plain text (legacy `paths` predate substitution variables).
    init(_ source: String, variables: [String: [String]]?) {
        self.source = source
        self.tokens = Self.tokenize(Array(source.unicodeScalars), variables: variables)
    }

    /// Names of `$(name)` references that resolve to nothing.
    var undefinedVariables: [String] {
        tokens.compactMap { token in
            if case .undefinedVariable(let name) = token { return name }
            return nil
        }
    }

    /// True when the pattern accepts every input: one or more `*` and nothing else.
    var acceptsEverything: Bool {
        !tokens.isEmpty && tokens.allSatisfy { $0 == .anyRun }
    }

    /// Whole-input match; `caseSensitive == false` folds ASCII letters only, as Apple documents.
    func matches(_ input: [Unicode.Scalar], caseSensitive: Bool) -> Bool {
        var reachable = [Bool](repeating: false, count: input.count + 1)
        reachable[0] = true
        for token in tokens {
            reachable = Self.advance(reachable, over: token, input: input, caseSensitive: caseSensitive)
            if !reachable.contains(true) { return false }
        }
        return reachable[input.count]
    }

    /// Convenience for matching text directly.
    func matches(_ text: String, caseSensitive: Bool) -> Bool {
        matches(Array(text.unicodeScalars), caseSensitive: caseSensitive)
    }

    private static func advance(
        _ current: [Bool], over token: Token, input: [Unicode.Scalar], caseSensitive: Bool
    ) -> [Bool] {
        var next = [Bool](repeating: false, count: current.count)
        switch token {
        case .literal(let expected):
            for offset in input.indices where current[offset] {
                if scalarsEqual(input[offset], expected, caseSensitive: caseSensitive) { next[offset + 1] = true }
            }
        case .anyCharacter:
            for offset in input.indices where current[offset] { next[offset + 1] = true }
        case .anyRun:
            var seen = false
            for offset in current.indices {
                seen = seen || current[offset]
                next[offset] = seen
            }
        case .characterClass(let characterClass):
            for offset in input.indices where current[offset] {
                if characterClass.contains(input[offset], caseSensitive: caseSensitive) { next[offset + 1] = true }
            }
        case .alternatives(let alternatives):
            for alternative in alternatives {
                var reached = current
                for inner in alternative {
                    reached = advance(reached, over: inner, input: input, caseSensitive: caseSensitive)
                }
                for offset in reached.indices where reached[offset] { next[offset] = true }
            }
        case .undefinedVariable:
            break
        }
        return next
    }

    static func scalarsEqual(_ left: Unicode.Scalar, _ right: Unicode.Scalar, caseSensitive: Bool) -> Bool {
        if left == right { return true }
        guard !caseSensitive else { return false }
        return asciiLowercased(left) == asciiLowercased(right)
    }

    static func asciiLowercased(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
    }

    private static func tokenize(_ scalars: [Unicode.Scalar], variables: [String: [String]]?) -> [Token] {
        var tokens: [Token] = []
        var position = 0
        while position < scalars.count {
            let scalar = scalars[position]
            if scalar == "$", let variables, let reference = variableReference(in: scalars, at: position) {
                tokens.append(resolveVariable(reference.name, custom: variables))
                position = reference.end
                continue
            }
            switch scalar {
            case "*":
                // Consecutive stars are one star; collapsing keeps the token count (and work) small.
                if tokens.last != .anyRun { tokens.append(.anyRun) }
            case "?": tokens.append(.anyCharacter)
            default: tokens.append(.literal(scalar))
            }
            position += 1
        }
        return tokens
    }

    /// Finds `$(name)` at `position`; names may hold any character except `$`, `(` and `)` (Apple's rule).
    private static func variableReference(
        in scalars: [Unicode.Scalar], at position: Int
    ) -> (name: String, end: Int)? {
        guard position + 1 < scalars.count, scalars[position + 1] == "(" else { return nil }
        var cursor = position + 2
        var name = String.UnicodeScalarView()
        while cursor < scalars.count {
            switch scalars[cursor] {
            case ")": return name.isEmpty ? nil : (String(name), cursor + 1)
            case "$", "(": return nil
            default: name.append(scalars[cursor])
            }
            cursor += 1
        }
        return nil
    }

    /// Custom variables shadow predefined ones: the file author's explicit list is the more specific definition.
    private static func resolveVariable(_ name: String, custom: [String: [String]]) -> Token {
        if let values = custom[name] {
            return .alternatives(values.map { tokenize(Array($0.unicodeScalars), variables: nil) })
        }
        if let characterClass = PredefinedSubstitutionVariables.CharacterClass(rawValue: name) {
            return .characterClass(characterClass)
        }
        if let codes = PredefinedSubstitutionVariables.codes(named: name) {
            return .alternatives(codes.map { $0.unicodeScalars.map(Token.literal) })
        }
        return .undefinedVariable(name)
    }
}

extension AssociationWildcardPattern {
    /// Percent-decodes URL text; malformed escapes stay literal and invalid UTF-8 becomes U+FFFD, so it never fails.
    static func percentDecoded(_ text: String, plusAsSpace: Bool = false) -> String {
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var position = 0
        while position < source.count {
            let byte = source[position]
            if byte == UInt8(ascii: "%"), position + 2 < source.count,
                let high = hexValue(source[position + 1]), let low = hexValue(source[position + 2])
            {
                bytes.append(high << 4 | low)
                position += 3
                continue
            }
            bytes.append(plusAsSpace && byte == UInt8(ascii: "+") ? 0x20 : byte)
            position += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Splits a raw query into items: `&`-separated, name and value split at the first `=`, no `=` means value "".
    static func queryItems(_ rawQuery: String) -> [(name: String, value: String)] {
        rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                return (String(item[..<equals]), String(item[item.index(after: equals)...]))
            }
            return (String(item), "")
        }
    }
}
