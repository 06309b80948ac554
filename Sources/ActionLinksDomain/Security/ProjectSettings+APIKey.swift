import ActionLinksConfiguration

extension ProjectSettings {
    /// The project's API key that `key` is (every key compared in constant time), or `nil`.
    package func apiKey(matching key: some StringProtocol) -> APIKey? {
        var found: APIKey?
        for candidate in apiKeys where ConstantTime.equal(key.utf8, candidate.key.utf8) { found = candidate }
        return found
    }
}
