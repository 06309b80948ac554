/// Unwraps links nested in other links, the way the Firebase JS SDK does and then some.
///
/// First the JS SDK's choice — `deep_link_id`→`link`, `deep_link_id`, `link`→`deep_link_id`,
/// `link`, else the URL itself — then any known wrapper that remains (`/__/auth/links`,
/// `*.page.link`, `*.app.goo.gl`) is unwrapped too, up to ``maximumDepth`` layers in all.
public enum LinkUnwrapper {
    /// The most layers (the input included) a chain may have.
    public static let maximumDepth = 8

    /// One URL of the chain and how the next one was found in it.
    public struct Layer: Sendable, Hashable {
        /// The URL of this layer (decoded from the layer before it).
        public let url: String
        /// The query parameter that held the next layer, or `nil` for the last layer.
        public let innerParameter: String?
        /// What kind of URL this layer is.
        public let kind: Kind
    }

    /// What kind of URL a layer is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// `https://<domain>/__/auth/links?link=...`: the mobile-link wrapper.
        case mobileLinkWrapper
        /// `https://*.page.link/...` or `*.app.goo.gl`: a (retired) Firebase Dynamic Link.
        case dynamicLinkWrapper
        /// Any other URL whose `link` or `deep_link_id` parameter holds the next layer (e.g. an app's
        /// custom-scheme callback).
        case deepLinkCarrier
        /// The innermost URL, the one the action is read from.
        case target
    }

    /// Unwraps `input` and returns the layers, outermost first, and the innermost URL.
    public static func unwrap(_ input: String) -> (layers: [Layer], result: Result<URLParts, LinkInspection.Failure>) {
        let (layers, result) = unwrapRecordingLayers(input)
        return (layers, result.map(\.parts))
    }

    static func unwrapRecordingLayers(_ input: String) -> (layers: [Layer], result: Result<ScannedURL, LinkInspection.Failure>) {
        var layers: [Layer] = []
        let result = unwrap(input) { url, parts, parameter in
            let kind = parts.flatMap(wrapperKind) ?? (parameter == nil ? .target : .deepLinkCarrier)
            layers.append(Layer(url: url, innerParameter: parameter, kind: kind))
        }
        return (layers, result)
    }

    /// The core: calls `onLayer` with each layer's URL (and its parts, when it splits) and the
    /// parameter that holds the next layer.
    static func unwrap(
        _ input: String, onLayer: (_ url: String, _ parts: URLParts?, _ innerParameter: String?) -> Void
    ) -> Result<ScannedURL, LinkInspection.Failure> {
        var current: ScannedURL
        do {
            current = try ScannedURL(input)
        } catch {
            onLayer(input, nil, nil)
            return .failure(.notAURL(error, layer: 1))
        }
        var depth = 1

        // The JS SDK's choice (parseDeepLink); empty values count as absent there too.
        if let deepLink = current.nonEmptyValue(.deepLinkID) {
            if let failure = descend(&current, &depth, into: deepLink, via: .deepLinkID, onLayer) { return .failure(failure) }
            if let doubleLink = current.nonEmptyValue(.link), let failure = descend(&current, &depth, into: doubleLink, via: .link, onLayer)
            {
                return .failure(failure)
            }
        } else if let link = current.nonEmptyValue(.link) {
            if let failure = descend(&current, &depth, into: link, via: .link, onLayer) { return .failure(failure) }
            if let doubleDeepLink = current.nonEmptyValue(.deepLinkID),
                let failure = descend(&current, &depth, into: doubleDeepLink, via: .deepLinkID, onLayer)
            {
                return .failure(failure)
            }
        }

        // Then whatever known wrapper is left.
        while wrapperKind(current.parts) != nil {
            let link = current.nonEmptyValue(.link)
            guard let inner = link ?? current.nonEmptyValue(.deepLinkID) else {
                onLayer(current.parts.string, current.parts, nil)
                return .failure(
                    .init(code: .wrapperWithoutLink, message: "layer \(depth) is a link wrapper without a link or deep_link_id parameter"))
            }
            guard depth < maximumDepth else {
                onLayer(current.parts.string, current.parts, nil)
                return .failure(.init(code: .tooDeep, message: "the link is nested more than \(maximumDepth) layers deep"))
            }
            if let failure = descend(&current, &depth, into: inner, via: link != nil ? .link : .deepLinkID, onLayer) {
                return .failure(failure)
            }
        }
        onLayer(current.parts.string, current.parts, nil)
        return .success(current)
    }

    /// Records the current layer and moves to the one its `parameter` holds.
    private static func descend(
        _ current: inout ScannedURL, _ depth: inout Int, into inner: String, via parameter: QueryScan.Name,
        _ onLayer: (_ url: String, _ parts: URLParts?, _ innerParameter: String?) -> Void
    ) -> LinkInspection.Failure? {
        onLayer(current.parts.string, current.parts, parameter.text.description)
        depth += 1
        do {
            current = try ScannedURL(inner)
            return nil
        } catch {
            onLayer(inner, nil, nil)
            return .notAURL(error, layer: depth)
        }
    }

    /// The decoded, non-empty `link` and `deep_link_id` values (the last of each wins).
    static func linkParameters(of url: URLParts) -> (link: String?, deepLink: String?) {
        let queryRange = url.queryRange
        let scanned = ScannedURL(parts: url, query: url.withBytes { QueryScan($0, query: queryRange) })
        return (scanned.nonEmptyValue(.link), scanned.nonEmptyValue(.deepLinkID))
    }

    /// Whether `url` is a wrapper we know to unwrap even without the JS SDK's first step.
    static func wrapperKind(_ url: URLParts) -> Kind? {
        url.withBytes { bytes in wrapperKind(bytes, path: url.pathRange, host: url.hostRange) }
    }

    /// ``wrapperKind(_:)`` for a URL given as its bytes and the ranges of its path and host.
    @inline(__always)
    static func wrapperKind(_ bytes: UnsafeBufferPointer<UInt8>, path: Range<Int>, host: Range<Int>?) -> Kind? {
        if path.count == 14, equalBytes(bytes, path, ActionCodeLink.mobileLinkPathBytes, caseInsensitive: false) {
            return .mobileLinkWrapper
        }
        guard let host else { return nil }
        if hasSuffix(bytes, host, ".page.link") || hasSuffix(bytes, host, ".app.goo.gl") { return .dynamicLinkWrapper }
        return nil
    }

    private static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard range.count > count else { return false }
        return equalBytes(bytes, (range.upperBound - count)..<range.upperBound, suffix, caseInsensitive: true)
    }

    private static func equalBytes(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ text: StaticString, caseInsensitive: Bool)
        -> Bool
    {
        guard range.count == text.utf8CodeUnitCount else { return false }
        let other = text.utf8Start
        let fold: UInt8 = caseInsensitive ? 0x20 : 0
        for k in 0..<range.count where bytes[range.lowerBound + k] | fold != other[k] | fold { return false }
        return true
    }
}
