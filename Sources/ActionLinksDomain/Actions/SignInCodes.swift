import ActionLinksConfiguration
import Foundation

/// Sign-in codes (`codes.signInCode`): every email sign-in link this server mails (or returns to
/// the admin) comes with a short code, which the person types into the app that asked for the
/// link, on whatever device it runs; the app exchanges it (`signInCodes:exchange`) for the link
/// exactly as mailed and signs in with its own SDK (`signInWithEmailLink`).
///
/// - **The code** is derived from the link's `oobCode` under a server key (``SignInCodeKeys``), so
///   the mail, the landing page and the admin's answer show the same digits and the store never
///   holds them. A front of a Firebase project derives it from Google's `oobCode` the same way:
///   ``issue(tenantID:email:link:oobCode:linkExpiry:)`` takes a link built elsewhere.
/// - **The store** keeps, per (tenant, address), a MAC of (tenant, address, code), the link sealed
///   under a key derived from the server key and the code, the tries, the expiry and the use
///   (``SignInCodeStore``). A new link replaces the address's code.
/// - **The exchange** counts the try (and the per-address and per-IP limits) before the code is
///   checked, in one store call, whether or not the address has a code; compares the MAC in
///   constant time; and uses the code in one atomic statement. Every refusal is the same
///   `INVALID_SIGN_IN_CODE`.
public struct SignInCodes: Sendable {
    /// `codes.signInCode`.
    let settings: SignInCodeSettings
    /// `limits`: the exchanges per address and per IP.
    let limits: LimitSettings
    let keys: SignInCodeKeys
    let store: any SignInCodeStore
    let gateway: StoreGateway
    let clock: any ServiceClock

    /// Whether sign-in links come with codes (`codes.signInCode.digits` is not 0).
    public var isEnabled: Bool { settings.isEnabled }

    // MARK: Issuing

    /// Stores the code of a sign-in link that was just issued, replacing the address's previous
    /// code, and returns it (its digits, ungrouped); `nil` when codes are off.
    ///
    /// `link` is the link exactly as it is mailed (web or mobile), `oobCode` the code in it (this
    /// server's, or, in front of a Firebase project, Google's), `linkExpiry` when the link stops
    /// working: the code lives `codes.signInCode.lifetime`, and never past it. `email` is the
    /// address the link is for (canonicalised here, as the exchange canonicalises what is typed).
    public func issue(tenantID: String, email: String, link: String, oobCode: String, linkExpiry: Timestamp) async throws(ActionError)
        -> String?
    {
        guard let prepared = try prepare(tenantID: tenantID, email: email, link: link, oobCode: oobCode, linkExpiry: linkExpiry) else {
            return nil
        }
        try await gateway.call { try await self.store.issue(prepared.record) }
        return prepared.code
    }

    /// What ``issue(tenantID:email:link:oobCode:linkExpiry:)`` stores and returns, made without
    /// storing it (for a store that writes it with the link's code: ``LinkIssueWrite/signInCode``);
    /// `nil` when codes are off.
    package func prepare(tenantID: String, email: String, link: String, oobCode: String, linkExpiry: Timestamp) throws(ActionError)
        -> (code: String, record: SignInCodeRecord)?
    {
        guard settings.isEnabled else { return nil }
        guard let email = EmailAddress.canonical(email) else { throw ActionError.invalidEmail }
        let now = clock.now
        let code = keys.code(oobCode: oobCode, digits: settings.digits)
        let sealed: Data
        do {
            sealed = try keys.seal(
                link, with: keys.sealingKey(tenantID: tenantID, email: email, code: code), tenantID: tenantID, email: email)
        } catch {
            throw ActionError(.internalError, "the sign-in code's link could not be sealed", cause: error)
        }
        let record = SignInCodeRecord(
            tenantID: tenantID, email: email, mac: keys.mac(tenantID: tenantID, email: email, code: code), sealedLink: sealed,
            createdAt: now, expiresAt: min(now + .seconds(settings.lifetime), linkExpiry))
        return (code, record)
    }

    /// The code of the link whose code is `oobCode` (its digits, ungrouped): what its mail shows;
    /// `nil` when codes are off. Nothing is looked up.
    public func code(oobCode: String) -> String? {
        settings.isEnabled ? keys.code(oobCode: oobCode, digits: settings.digits) : nil
    }

    /// The code a live sign-in link's landing page shows (grouped), while the code can still be
    /// exchanged as far as time goes (`codes.signInCode.lifetime` after the link was issued, and not
    /// past the link's expiry); `nil` otherwise, for another mode, or when codes are off.
    package func shownCode(oobCode: String, record: ActionCodeRecord, now: Timestamp) -> String? {
        guard record.mode == .signIn, now < min(record.createdAt + .seconds(settings.lifetime), record.expiresAt),
            let code = code(oobCode: oobCode)
        else { return nil }
        return Self.grouped(code)
    }

    // MARK: Exchanging

    /// What a right code is exchanged for.
    public struct Exchange: Sendable, Hashable {
        /// The link exactly as it was mailed.
        public var emailLink: String
        /// The canonical address it was sent to (what `signInWithEmailLink` is given with it).
        public var email: String
    }

    /// ``exchange(email:code:tenantID:clientAddress:)`` in this server's own `tenant`, which must
    /// allow email-link sign-in (`OPERATION_NOT_ALLOWED`).
    package func exchange(email: String?, code: String?, tenant: TenantPolicy, clientAddress: String?) async throws(ActionError) -> Exchange
    {
        guard tenant.enableEmailLinkSignin else { throw ActionError(.operationNotAllowed) }
        return try await exchange(email: email, code: code, tenantID: tenant.tenantID, clientAddress: clientAddress)
    }

    /// Exchanges a code typed into an app (spaces, dashes and any script's digits allowed) for the
    /// link it came with, once. Every refusal (a wrong, expired, used or dead code, an address with
    /// no code, a code of another tenant, a mistyped one) is `INVALID_SIGN_IN_CODE`, after the same
    /// work for every well-formed code: its MAC and sealing key are made and one store call counts
    /// the try before anything is known of the address. Past `limits.signInCodeExchangesPerAddressPerHour`
    /// or `...PerIPPerHour` the answer is `TOO_MANY_ATTEMPTS_TRY_LATER` with `Retry-After` (the end
    /// of the hour's window).
    public func exchange(email given: String?, code typed: String?, tenantID: String, clientAddress: String?) async throws(ActionError)
        -> Exchange
    {
        guard settings.isEnabled else {
            throw ActionError(.operationNotAllowed, "sign-in codes are off on this server (codes.signInCode.digits: 0)")
        }
        guard let given, !given.isEmpty else { throw ActionError.missingEmail }
        guard let email = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
        guard let typed, let code = Self.normalized(typed, digits: settings.digits) else { throw ActionError.invalidSignInCode }
        let now = clock.now
        let mac = keys.mac(tenantID: tenantID, email: email, code: code)
        let sealingKey = keys.sealingKey(tenantID: tenantID, email: email, code: code)
        var counted = [EventLimit(key: "sign-in-code:address:" + email, maximum: limits.signInCodeExchangesPerAddressPerHour)]
        if let clientAddress {
            counted.append(EventLimit(key: "sign-in-code:ip:" + clientAddress, maximum: limits.signInCodeExchangesPerIPPerHour))
        }
        let window = now.roundedDown(to: .seconds(3600))
        let maximumTries = settings.attempts
        let limitsCounted = counted
        let tried = try await gateway.call {
            try await self.store.tryCode(
                tenantID: tenantID, email: email, now: now, maximumTries: maximumTries, limits: limitsCounted, windowStart: window)
        }
        let stored: Data?
        switch tried {
        case .limited:
            let left = (window + .seconds(3600)).milliseconds - now.milliseconds
            throw ActionError.tooManyAttempts.retrying(after: Int((left + 999) / 1000))
        case .counted(let mac):
            stored = mac
        }
        // Compared in constant time whether or not there is a code (then against a MAC no code has).
        let matches = ConstantTime.equal(stored ?? Self.noCode, mac)
        guard matches, stored != nil else { throw ActionError.invalidSignInCode }
        guard let sealed = try await gateway.call({ try await self.store.use(tenantID: tenantID, email: email, mac: mac, now: now) }),
            let link = keys.open(sealed, with: sealingKey, tenantID: tenantID, email: email)
        else { throw ActionError.invalidSignInCode }
        return Exchange(emailLink: link, email: email)
    }

    /// What an address with no code is compared with: no MAC is all zeros.
    static let noCode = Data(repeating: 0, count: 32)

    // MARK: Shapes

    /// The code's digits in groups, as mails and pages show them: the fewest groups of at most four
    /// digits, as even as possible, the longer ones last (`123 456`, `123 4567`, `1234 5678`,
    /// `123 456 789`, `123 456 7890`).
    public static func grouped(_ code: String) -> String {
        let digits = Array(code)
        let groups = max(1, (digits.count + 3) / 4)
        let size = digits.count / groups
        let longer = digits.count % groups
        var parts: [String] = []
        var start = 0
        for index in 0..<groups {
            let length = size + (index >= groups - longer ? 1 : 0)
            parts.append(String(digits[start..<start + length]))
            start += length
        }
        return parts.joined(separator: " ")
    }

    /// The code typed as its ASCII digits, if it is `digits` digits once spaces, dashes and
    /// invisible formatting (bidi isolates) are dropped; digits of any script count (`１２３`, `١٢٣`).
    static func normalized(_ typed: String, digits: Int) -> String? {
        guard typed.unicodeScalars.count <= 64 else { return nil }
        var code = ""
        for scalar in typed.unicodeScalars {
            let properties = scalar.properties
            if properties.isWhitespace || properties.generalCategory == .dashPunctuation || properties.generalCategory == .format {
                continue
            }
            guard properties.numericType == .decimal, let value = properties.numericValue, (0.0...9.0).contains(value) else { return nil }
            code.append(String(Int(value)))
        }
        return code.count == digits ? code : nil
    }
}
