import ActionLinksDomain

extension SecondFactor {
    /// The second factors an account row's `mfa` column holds (both stores, schema v14): a value
    /// that is not their JSON array is a ``StoreInconsistency``, never read as none (that would take
    /// the account's second factors away at its next write).
    static func stored(_ json: String?) throws -> [SecondFactor] {
        do {
            return try factors(json: json)
        } catch {
            throw StoreInconsistency(description: "an account whose second factors (mfa) are not a JSON array of factors")
        }
    }
}
