/// Why a SAML message was refused: a sentence for the error's detail (it names what was wrong,
/// never a secret).
public struct SAMLRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. "the assertion is for another audience (https://other.example)".
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
