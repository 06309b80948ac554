/// Where the keys every instance shares come from (`keys`): one secret made by
/// `actionlinks keys init`, as a file (a mounted secret, read again when it changes) or as the
/// JSON itself (an environment variable). Without either, the keys are files under the data
/// directory, made on first start: right for one instance with its own disk, and refused on a
/// shared store (PostgreSQL) unless the files are already there.
public struct KeySettings: Sendable, Hashable {
    /// `keys.file`: the key set's path.
    public var file: String?
    /// `keys.json`: the key set itself (`ACTIONLINKS_KEYS_JSON`).
    public var json: String?

    /// Whether the keys come from a shared key set.
    public var isShared: Bool { file != nil || json != nil }

    /// No key set: the data directory's keys.
    public init() {}
}

extension KeySettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case file, json
    }

    /// Reads `keys`: at most one of `file` and `json`.
    public init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        file = try keys.string(.file)
        json = try keys.string(.json)
        if file != nil, json != nil {
            throw keys.problem(.json, "expected either keys.file or keys.json (the key set itself), not both")
        }
        if let file, file.isEmpty { throw keys.problem(.file, "expected the path of the key set that `actionlinks keys init` makes") }
    }
}
