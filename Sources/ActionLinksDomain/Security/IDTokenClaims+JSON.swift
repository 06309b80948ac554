import ActionLinks

/// The claims of an ID token as JSON, written by the library's ``JSONValue`` serializer: every
/// refresh signs one, and `JSONEncoder` (its containers, its key boxing, its escaping pass) was a
/// tenth of a refresh's CPU beyond the signature. The JSON holds the same members with the same
/// values as `JSONEncoder`'s encoding of ``IDTokenClaims/encode(to:)`` (in another order: a JWT's
/// members have none), so any JSON reader reads back the same claims; `IDTokenClaimsJSONTests` checks that on
/// claims with every kind of text.
extension IDTokenClaims {
    /// The claims' JSON, or `nil` when they carry what only `JSONEncoder` writes here: developer
    /// claims or a SAML sign-in's attributes (arbitrary JSON values).
    var directJSON: [UInt8]? {
        guard custom.isEmpty, firebase.signInAttributes == nil else { return nil }
        typealias Member = JSONValue.Member
        var members: [Member] = [
            Member("iss", .string(iss)), Member("aud", .string(aud)), Member("auth_time", .integer(Int(authTime))),
            Member("user_id", .string(userID)), Member("sub", .string(sub)), Member("iat", .integer(Int(iat))),
            Member("exp", .integer(Int(exp))),
        ]
        members.reserveCapacity(14)
        if let email { members.append(Member("email", .string(email))) }
        if let emailVerified { members.append(Member("email_verified", .bool(emailVerified))) }
        if let phoneNumber { members.append(Member("phone_number", .string(phoneNumber))) }
        if let name { members.append(Member("name", .string(name))) }
        if let picture { members.append(Member("picture", .string(picture))) }
        if let providerID { members.append(Member("provider_id", .string(providerID))) }
        var firebaseMembers: [Member] = [
            Member("identities", .object(firebase.identities.map { Member($0.key, .array($0.value.map(JSONValue.string))) })),
            Member("sign_in_provider", .string(firebase.signInProvider)),
        ]
        if let tenant = firebase.tenant { firebaseMembers.append(Member("tenant", .string(tenant))) }
        if let factor = firebase.signInSecondFactor { firebaseMembers.append(Member("sign_in_second_factor", .string(factor))) }
        if let identifier = firebase.secondFactorIdentifier {
            firebaseMembers.append(Member("second_factor_identifier", .string(identifier)))
        }
        members.append(Member("firebase", .object(firebaseMembers)))
        return JSONValue.object(members).serialized(.compact)
    }
}
