/// ``ActionCodeLink/parse(_:)`` without the explanations: the same layers and rules as
/// ``LinkUnwrapper`` and ``LinkInspection`` (docs/LINK-RULES.md §2 to §4), worked out on UTF-8 bytes.
///
/// Each layer is split and its query scanned in one pass (``URLParts/split(_:into:query:)`` with a
/// ``QueryScan``); a nested link is percent-decoded into a temporary buffer, not a string, and read
/// from there; only the fields of the result become strings, and a value is decoded only when it
/// holds a `%`. The fuzzer checks on every input that this reading equals ``LinkInspection``'s.
enum LinkParser {
    /// Where the unwrapping stands when a layer is read (``LinkUnwrapper/unwrap(_:onLayer:)``).
    private enum Step {
        /// The input: the JS SDK's choice of `deep_link_id`, else `link`, comes first.
        case input
        /// The layer a `deep_link_id` held: its `link`, if any, is followed next.
        case deepLink
        /// The layer a `link` held: its `deep_link_id`, if any, is followed next.
        case link
        /// Only known wrappers are unwrapped from here on.
        case wrappers
    }

    static func parse(_ link: String) -> ActionCodeLink? {
        parse(link, action)
    }

    /// Finds the innermost layer of `link` and returns what `make` reads from it (its bytes and
    /// scanned query, valid only during the call), or `nil` when the layers lead nowhere.
    @inline(__always)
    static func parse<R>(_ link: String, _ make: (UnsafeBufferPointer<UInt8>, QueryScan) -> R?) -> R? {
        // A native string's bytes are used in place (without the copy `withUTF8` needs a `var` for);
        // any other is made native once.
        if let parsed = link.utf8.withContiguousStorageIfAvailable({ parse(layer: $0, depth: 1, step: .input, make) }) {
            return parsed
        }
        var text = link
        return text.withUTF8 { parse(layer: $0, depth: 1, step: .input, make) }
    }

    /// Reads one layer, and the layers it leads to; `depth` counts the input as 1.
    private static func parse<R>(
        layer bytes: UnsafeBufferPointer<UInt8>, depth: Int, step: Step, _ make: (UnsafeBufferPointer<UInt8>, QueryScan) -> R?
    ) -> R? {
        var query = QueryScan()
        var offsets = URLParts.Offsets()
        guard URLParts.split(bytes, into: &offsets, query: &query) == nil else { return nil }

        // `.some(result)` when `name` holds a next layer (present, non-empty and decodable, as the JS
        // SDK's truthiness has it) and it was read; `.none` when there is nothing to follow.
        func follow(_ name: QueryScan.Name, then next: Step) -> R?? {
            guard let range = query[name], !range.isEmpty else { return .none }
            let raw = UnsafeBufferPointer(rebasing: bytes[range])
            guard query.isEscaped(name) else { return .some(parse(layer: raw, depth: depth + 1, step: next, make)) }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: raw.count) { buffer -> R?? in
                guard let count = PercentEncoding.decode(raw, into: buffer) else { return .none }
                return .some(parse(layer: UnsafeBufferPointer(rebasing: buffer[..<count]), depth: depth + 1, step: next, make))
            }
        }

        switch step {
        case .input:
            if let parsed = follow(.deepLinkID, then: .deepLink) { return parsed }
            if let parsed = follow(.link, then: .link) { return parsed }
        case .deepLink:
            if let parsed = follow(.link, then: .wrappers) { return parsed }
        case .link:
            if let parsed = follow(.deepLinkID, then: .wrappers) { return parsed }
        case .wrappers:
            break
        }
        if LinkUnwrapper.wrapperKind(bytes, path: offsets.path, host: offsets.host) != nil {
            // A wrapper with nothing to follow, or one layer too many, is not an action link.
            guard depth < LinkUnwrapper.maximumDepth else { return nil }
            if let parsed = follow(.link, then: .wrappers) { return parsed }
            if let parsed = follow(.deepLinkID, then: .wrappers) { return parsed }
            return nil
        }
        return make(bytes, query)
    }

    /// The known mode of the innermost layer, when it also has a non-empty code.
    static func mode(_ bytes: UnsafeBufferPointer<UInt8>, _ query: QueryScan) -> ActionCodeLink.Mode? {
        guard let modeRange = query[.mode], let codeRange = query[.oobCode], !codeRange.isEmpty else { return nil }
        let rawMode = UnsafeBufferPointer(rebasing: bytes[modeRange])
        let mode: ActionCodeLink.Mode?
        if query.isEscaped(.mode) {
            mode = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: rawMode.count) { buffer in
                PercentEncoding.decode(rawMode, into: buffer).flatMap {
                    ActionCodeLink.Mode(utf8: UnsafeBufferPointer(rebasing: buffer[..<$0]))
                }
            }
        } else {
            mode = ActionCodeLink.Mode(utf8: rawMode)
        }
        return mode
    }

    /// The action the innermost layer carries, as ``ActionParameters/read(_:)`` reads it: a known mode
    /// and a non-empty code, and every field it reads decodable.
    private static func action(_ bytes: UnsafeBufferPointer<UInt8>, _ query: QueryScan) -> ActionCodeLink? {
        guard let mode = mode(bytes, query) else { return nil }

        // A field that is present but does not decode makes the link unreadable, as in `read`; an
        // empty one is absent.
        var decodes = true
        func field(_ name: QueryScan.Name) -> String? {
            guard let range = query[name], !range.isEmpty else { return nil }
            let value = PercentEncoding.decode(UnsafeBufferPointer(rebasing: bytes[range]), escaped: query.isEscaped(name))
            if value == nil { decodes = false }
            return value
        }
        guard let code = field(.oobCode) else { return nil }
        let apiKey = field(.apiKey)
        let continueURL = field(.continueUrl)
        let languageCode = field(.lang)
        let tenantID = field(.tenantId)
        guard decodes else { return nil }
        return ActionCodeLink(
            mode: mode, oobCode: code, apiKey: apiKey, continueURL: continueURL, languageCode: languageCode, tenantID: tenantID)
    }
}
