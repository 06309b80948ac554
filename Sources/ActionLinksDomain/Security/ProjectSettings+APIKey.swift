import ActionLinksConfiguration

extension ProjectSettings {
    /// The project's API key that `key` is (every key compared in constant time), or `nil`.
    /// Inlinable, as ``ConstantTime/equal(_:_:)``: the pages and the API's gate call it from the
    /// HTTP target with their own string types.
    @inlinable
    package func apiKey(matching key: some StringProtocol) -> APIKey? {
        var found: APIKey?
        for candidate in apiKeys where ConstantTime.equal(key.utf8, candidate.key.utf8) { found = candidate }
        return found
    }
}
