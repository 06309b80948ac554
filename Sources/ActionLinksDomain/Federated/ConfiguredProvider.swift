import ActionLinksConfiguration

/// A configured provider of either protocol, as a sign-in sees it: its `id`, and whether its
/// sign-ins are offered.
protocol ConfiguredProvider: Sendable {
    var id: String { get }
    var enabled: Bool { get }
}

extension ProviderSettings: ConfiguredProvider {}
extension SAMLProviderSettings: ConfiguredProvider {}

extension Array where Element: ConfiguredProvider {
    /// The configured provider `id`, if sign-ins with it are offered (`OPERATION_NOT_ALLOWED`
    /// otherwise).
    func enabled(_ id: String) throws(ActionError) -> Element {
        guard let provider = first(where: { $0.id == id }), provider.enabled else {
            throw ActionError(.operationNotAllowed, "The identity provider configuration is not found or is disabled: \(id.prefix(100))")
        }
        return provider
    }

    /// Refuses `id` when it is configured and its sign-ins are not offered.
    func checkOffered(_ id: String) throws(ActionError) {
        if contains(where: { $0.id == id }) { _ = try enabled(id) }
    }
}
