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
        var urls: [(String, String?)] = []
        let result = unwrap(input) { url, parameter in urls.append((url, parameter)) }
        var layers: [Layer] = []
        layers.reserveCapacity(urls.count)
        for (url, parameter) in urls {
            let kind = (try? URLParts(url)).flatMap(wrapperKind) ?? (parameter == nil ? .target : .deepLinkCarrier)
            layers.append(Layer(url: url, innerParameter: parameter, kind: kind))
        }
        return (layers, result)
    }

    /// The core: calls `onLayer` with each layer's URL and the parameter that holds the next one.
    static func unwrap(
        _ input: String, onLayer: (_ url: String, _ innerParameter: String?) -> Void
    ) -> Result<URLParts, LinkInspection.Failure> {
        var depth = 1
        let outer: URLParts
        do {
            outer = try URLParts(input)
        } catch {
            onLayer(input, nil)
            return .failure(.notAURL(error, layer: 1))
        }
        var current = outer

        // Step to the next layer: record the current one, then split the inner URL.
        func descend(into inner: String, via parameter: String) -> Result<URLParts, LinkInspection.Failure> {
            onLayer(current.string, parameter)
            depth += 1
            do {
                return .success(try URLParts(inner))
            } catch {
                onLayer(inner, nil)
                return .failure(.notAURL(error, layer: depth))
            }
        }

        // The JS SDK's choice (parseDeepLink): empty values count as absent there too.
        let (link, deepLink) = linkParameters(of: outer)
        if let deepLink {
            let deepParts = try? URLParts(deepLink)
            if let deepParts, let doubleLink = linkParameters(of: deepParts).link {
                switch descend(into: deepLink, via: "deep_link_id") {
                case .success(let parts): current = parts
                case .failure(let failure): return .failure(failure)
                }
                switch descend(into: doubleLink, via: "link") {
                case .success(let parts): current = parts
                case .failure(let failure): return .failure(failure)
                }
            } else {
                switch descend(into: deepLink, via: "deep_link_id") {
                case .success(let parts): current = parts
                case .failure(let failure): return .failure(failure)
                }
            }
        } else if let link {
            let linkParts = try? URLParts(link)
            switch descend(into: link, via: "link") {
            case .success(let parts): current = parts
            case .failure(let failure): return .failure(failure)
            }
            if let linkParts, let doubleDeep = linkParameters(of: linkParts).deepLink {
                switch descend(into: doubleDeep, via: "deep_link_id") {
                case .success(let parts): current = parts
                case .failure(let failure): return .failure(failure)
                }
            }
        }

        // Then whatever known wrapper is left.
        while wrapperKind(current) != nil {
            let (link, deepLink) = linkParameters(of: current)
            guard let inner = link ?? deepLink else {
                onLayer(current.string, nil)
                return .failure(.init(code: .wrapperWithoutLink, message: "layer \(depth) is a link wrapper without a link or deep_link_id parameter"))
            }
            guard depth < maximumDepth else {
                onLayer(current.string, nil)
                return .failure(.init(code: .tooDeep, message: "the link is nested more than \(maximumDepth) layers deep"))
            }
            switch descend(into: inner, via: link != nil ? "link" : "deep_link_id") {
            case .success(let parts): current = parts
            case .failure(let failure): return .failure(failure)
            }
        }
        onLayer(current.string, nil)
        return .success(current)
    }

    /// The decoded, non-empty `link` and `deep_link_id` values (the last of each wins).
    static func linkParameters(of url: URLParts) -> (link: String?, deepLink: String?) {
        var link: Substring?
        var deepLink: Substring?
        url.forEachQueryItem { name, value in
            if PercentEncoding.decodedEquals(name, "link") {
                link = value ?? ""
            } else if PercentEncoding.decodedEquals(name, "deep_link_id") {
                deepLink = value ?? ""
            }
        }
        return (link.flatMap(PercentEncoding.decode).nonEmpty, deepLink.flatMap(PercentEncoding.decode).nonEmpty)
    }

    /// Whether `url` is a wrapper we know to unwrap even without the JS SDK's first step.
    static func wrapperKind(_ url: URLParts) -> Kind? {
        if url.path == ActionCodeLink.mobileLinkPath[...] { return .mobileLinkWrapper }
        guard let host = url.host else { return nil }
        if host.hasASCIICaseInsensitiveSuffix(".page.link") || host.hasASCIICaseInsensitiveSuffix(".app.goo.gl") {
            return .dynamicLinkWrapper
        }
        return nil
    }
}

extension Substring {
    func hasASCIICaseInsensitiveSuffix(_ suffix: String) -> Bool {
        let mine = utf8
        let theirs = suffix.utf8
        guard mine.count > theirs.count else { return false }
        return zip(mine.suffix(theirs.count), theirs).allSatisfy { ($0 | 0x20) == ($1 | 0x20) }
    }
}
