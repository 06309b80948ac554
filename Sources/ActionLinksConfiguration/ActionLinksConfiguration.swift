import ActionLinks
import Foundation
import Yams

/// The settings in `config/actionlinks.yaml`, checked and turned into library values.
///
/// Every problem is reported with the file, the line, the key and what was expected, so a person can
/// fix it without reading code.
public struct ActionLinksConfiguration: Sendable {
    /// The default configuration file, relative to the working directory.
    public static let defaultFile = "config/actionlinks.yaml"

    /// The continue-URL allow-list (`continueUrls`).
    public var continueURLs: ContinueURLPolicy

    /// Reads and checks the configuration file at `path`.
    public static func load(file path: String) throws(ConfigurationError) -> ActionLinksConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, mark: nil, key: nil, message: "cannot read the file: \(Self.reason(error))")
        }
        return try parse(yaml: text, file: path)
    }

    /// Checks configuration text; `file` names it in error messages.
    public static func parse(yaml: String, file: String) throws(ConfigurationError) -> ActionLinksConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(file: file, mark: nil, key: nil, message: "not valid YAML: \(error)")
        }
        let reader = Reader(file: file)
        let top = try reader.mapping(root, key: nil, known: ["continueUrls"])
        var allow: [String] = []
        var defaultOrigin: String?
        var allowMarks: [Mark?] = []
        var sectionNode: Node?
        if let section = top["continueUrls"] {
            sectionNode = section
            let fields = try reader.mapping(section, key: "continueUrls", known: ["allow", "defaultOrigin"])
            if let list = fields["allow"] {
                let items = try reader.sequence(list, key: "continueUrls.allow")
                for (index, item) in items.enumerated() {
                    allow.append(try reader.string(item, key: "continueUrls.allow[\(index)]"))
                    allowMarks.append(item.mark)
                }
            }
            if let origin = fields["defaultOrigin"] {
                defaultOrigin = try reader.string(origin, key: "continueUrls.defaultOrigin")
            }
        }
        do {
            return ActionLinksConfiguration(continueURLs: try ContinueURLPolicy(allow: allow, defaultOrigin: defaultOrigin))
        } catch {
            var mark = sectionNode?.mark
            if error.key.hasPrefix("allow["), let index = Int(error.key.dropFirst(6).dropLast()), index < allowMarks.count {
                mark = allowMarks[index]
            } else if error.key == "defaultOrigin", let node = sectionNode?.mapping?["defaultOrigin"] {
                mark = node.mark
            }
            throw ConfigurationError(
                file: file, mark: mark, key: "continueUrls." + error.key,
                message: "expected \(error.expected); got '\(error.value)'")
        }
    }

    /// Creates a configuration from values.
    public init(continueURLs: ContinueURLPolicy) {
        self.continueURLs = continueURLs
    }

    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "No such file or directory"
        case .fileReadNoPermission?: "Permission denied"
        case .fileReadInapplicableStringEncoding?: "the file is not UTF-8 text"
        default: error.localizedDescription
        }
    }
}

/// A configuration problem: which file, where in it, which key, and what was expected.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The configuration file.
    public let file: String
    /// The line, when known.
    public let line: Int?
    /// The column, when known.
    public let column: Int?
    /// The dotted key, such as `continueUrls.allow[1]`, when the problem is about one.
    public let key: String?
    /// What is wrong and what was expected.
    public let message: String

    init(file: String, mark: Mark?, key: String?, message: String) {
        self.file = file
        self.line = mark?.line
        self.column = mark?.column
        self.key = key
        self.message = message
    }

    /// `file:line:column: key: message`.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        text += ": "
        if let key { text += key + ": " }
        return text + message
    }
}

/// Walks the YAML tree, turning each unexpected shape into a ``ConfigurationError``.
struct Reader {
    let file: String

    func fail(_ node: Node?, _ key: String?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, mark: node?.mark, key: key, message: message)
    }

    /// The entries of a mapping; refuses unknown and repeated keys (suggesting the nearest known one).
    func mapping(_ node: Node?, key: String?, known: [String]) throws(ConfigurationError) -> [String: Node] {
        guard let node else { return [:] }
        if case .scalar(let scalar) = node, scalar.string.isEmpty || node.null != nil { return [:] }
        guard case .mapping(let mapping) = node else {
            throw fail(node, key, "expected a mapping of \(known.joined(separator: ", "))")
        }
        var out: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string else { throw fail(keyNode, key, "expected a plain key") }
            let path = key.map { "\($0).\(name)" } ?? name
            guard known.contains(name) else {
                var message = "unknown key; expected one of \(known.joined(separator: ", "))"
                if let near = known.min(by: { editDistance($0, name) < editDistance($1, name) }), editDistance(near, name) <= 3 {
                    message += " (did you mean '\(near)'?)"
                }
                throw fail(keyNode, path, message)
            }
            guard out[name] == nil else { throw fail(keyNode, path, "the key appears twice") }
            out[name] = value
        }
        return out
    }

    func sequence(_ node: Node, key: String) throws(ConfigurationError) -> [Node] {
        if case .scalar = node, node.null != nil { return [] }
        guard case .sequence(let sequence) = node else { throw fail(node, key, "expected a list") }
        return Array(sequence)
    }

    func string(_ node: Node, key: String) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node, node.null == nil, !scalar.string.isEmpty else {
            throw fail(node, key, "expected a non-empty string")
        }
        return scalar.string
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
