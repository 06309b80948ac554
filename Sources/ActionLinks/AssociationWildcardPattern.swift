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
        /// A substitution variable whose alternatives are all plain text (the ISO code lists, most custom
        /// lists): looked up by length in sets instead of simulated one by one.
        case literalAlternatives(LiteralSet)
        /// A variable nobody defined; it can match nothing, so the rule is dead and validation says so.
        case undefinedVariable(String)
    }

    let tokens: [Token]
    let source: String
    /// The literal text every match starts with, checked before the position-set simulation: most
    /// rules of a large file fail on it, so they cost a few comparisons instead of a simulation.
    private let literalPrefix: [Unicode.Scalar]

    /// Compiles `source`; `variables` nil means `$(` is plain text (legacy `paths` predate substitution variables).
    init(_ source: String, variables: [String: [String]]?) {
        self.source = source
        self.tokens = Self.tokenize(Array(source.unicodeScalars), variables: variables)
        var prefix: [Unicode.Scalar] = []
        for token in tokens {
            guard case .literal(let scalar) = token else { break }
            prefix.append(scalar)
        }
        literalPrefix = prefix
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
        guard input.count >= literalPrefix.count,
            zip(input, literalPrefix).allSatisfy({ Self.scalarsEqual($0, $1, caseSensitive: caseSensitive) })
        else { return false }
        // Two position sets, swapped after each token: no allocation per token.
        var current = [Bool](repeating: false, count: input.count + 1)
        var next = current
        current[0] = true
        for token in tokens {
            guard Self.advance(current, into: &next, over: token, input: input, caseSensitive: caseSensitive) else { return false }
            swap(&current, &next)
        }
        return current[input.count]
    }

    /// Convenience for matching text directly.
    func matches(_ text: String, caseSensitive: Bool) -> Bool {
        matches(Array(text.unicodeScalars), caseSensitive: caseSensitive)
    }

    /// Fills `next` with the offsets reachable after `token`; false when there are none.
    private static func advance(
        _ current: [Bool], into next: inout [Bool], over token: Token, input: [Unicode.Scalar], caseSensitive: Bool
    ) -> Bool {
        for offset in next.indices { next[offset] = false }
        var any = false
        switch token {
        case .literal(let expected):
            for offset in input.indices where current[offset] && scalarsEqual(input[offset], expected, caseSensitive: caseSensitive) {
                next[offset + 1] = true
                any = true
            }
        case .anyCharacter:
            for offset in input.indices where current[offset] {
                next[offset + 1] = true
                any = true
            }
        case .anyRun:
            var seen = false
            for offset in current.indices {
                seen = seen || current[offset]
                next[offset] = seen
            }
            any = seen
        case .characterClass(let characterClass):
            for offset in input.indices where current[offset] && characterClass.contains(input[offset], caseSensitive: caseSensitive) {
                next[offset + 1] = true
                any = true
            }
        case .literalAlternatives(let set):
            for offset in current.indices where current[offset] {
                for length in set.lengths where offset + length <= input.count {
                    if set.contains(input[offset..<(offset + length)], caseSensitive: caseSensitive) {
                        next[offset + length] = true
                        any = true
                    }
                }
            }
        case .alternatives(let alternatives):
            var reached = current
            var scratch = current
            for alternative in alternatives {
                for offset in reached.indices { reached[offset] = current[offset] }
                var alive = true
                for inner in alternative {
                    alive = advance(reached, into: &scratch, over: inner, input: input, caseSensitive: caseSensitive)
                    swap(&reached, &scratch)
                    if !alive { break }
                }
                guard alive else { continue }
                for offset in reached.indices where reached[offset] {
                    next[offset] = true
                    any = true
                }
            }
        case .undefinedVariable:
            break
        }
        return any
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
            let alternatives = values.map { tokenize(Array($0.unicodeScalars), variables: nil) }
            let plain = alternatives.allSatisfy { $0.allSatisfy { if case .literal = $0 { true } else { false } } }
            return plain ? .literalAlternatives(LiteralSet(values)) : .alternatives(alternatives)
        }
        if let characterClass = PredefinedSubstitutionVariables.CharacterClass(rawValue: name) {
            return .characterClass(characterClass)
        }
        if let codes = PredefinedSubstitutionVariables.codes(named: name) {
            return .literalAlternatives(LiteralSet(codes))
        }
        return .undefinedVariable(name)
    }
}

/// Plain-text alternatives grouped by length, each group a set (exact and ASCII-folded).
struct LiteralSet: Sendable, Hashable {
    private var exact: [Int: Set<[Unicode.Scalar]>] = [:]
    private var folded: [Int: Set<[Unicode.Scalar]>] = [:]
    /// The distinct lengths, shortest first.
    let lengths: [Int]

    init(_ values: [String]) {
        for value in values {
            let scalars = Array(value.unicodeScalars)
            exact[scalars.count, default: []].insert(scalars)
            folded[scalars.count, default: []].insert(scalars.map(AssociationWildcardPattern.asciiLowercased))
        }
        lengths = exact.keys.sorted()
    }

    func contains(_ candidate: ArraySlice<Unicode.Scalar>, caseSensitive: Bool) -> Bool {
        if caseSensitive { return exact[candidate.count]?.contains(Array(candidate)) ?? false }
        return folded[candidate.count]?.contains(candidate.map(AssociationWildcardPattern.asciiLowercased)) ?? false
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
                let high = PercentEncoding.hexValue(source[position + 1]), let low = PercentEncoding.hexValue(source[position + 2])
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
