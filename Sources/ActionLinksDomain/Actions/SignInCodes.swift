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
///   ``issue(tenantID:email:link:oobCode:linkHash:linkExpiry:)`` takes a link built elsewhere.
/// - **The store** keeps, per (tenant, address), a MAC of (tenant, address, code), the link sealed
///   under a key derived from the server key and the code, the tries, the expiry and the use
///   (``SignInCodeStore``). A new link replaces the address's code. The code dies with its link:
///   this server's in the write that consumes, retires or deletes the link's code (the store's
///   triggers), a front's when Google says the link no longer works (``liveLink``).
/// - **The exchange** counts the try (the per-IP, then the per-address limits, then the address's
///   wrong codes over a day and over 30 days) before the code is checked, in one store call,
///   whether or not the address has a code; compares the MAC in constant time; and uses the code
///   in one atomic statement, which takes back the try's count of wrong codes. Every refusal is
///   the same `INVALID_SIGN_IN_CODE`.
public struct SignInCodes: Sendable {
    /// `codes.signInCode`.
    let settings: SignInCodeSettings
    /// `limits`: the exchanges per IP and per address, the wrong codes per address.
    let limits: LimitSettings
    let keys: SignInCodeKeys
    let store: any SignInCodeStore
    let gateway: StoreGateway
    let clock: any ServiceClock
    /// Where exchanges are counted by outcome.
    var metrics: ServerMetrics? = nil
    /// Whether a link whose code is another's (a front's: Google's) still works, asked before its
    /// code is used; `nil` where every link's code is this server's (it dies with its code).
    var liveLink: (@Sendable (String) async throws(ActionError) -> Bool)? = nil

    /// Whether sign-in links come with codes (`codes.signInCode.digits` is not 0).
    public var isEnabled: Bool { settings.isEnabled }

    // MARK: Issuing

    /// Stores the code of a sign-in link that was just issued, replacing the address's previous
    /// code, and returns it (its digits, ungrouped); `nil` when codes are off.
    ///
    /// `link` is the link exactly as it is mailed (web or mobile), `oobCode` the code in it (this
    /// server's, or, in front of a Firebase project, Google's), `linkHash` the hash this server's
    /// code store keeps of that code (`nil` for Google's), `linkExpiry` when the link stops
    /// working: the code lives `codes.signInCode.lifetime`, and never past it. `email` is the
    /// address the link is for (canonicalised here, as the exchange canonicalises what is typed).
    public func issue(tenantID: String, email: String, link: String, oobCode: String, linkHash: Data?, linkExpiry: Timestamp)
        async throws(ActionError) -> String?
    {
        guard
            let prepared = try prepare(
                tenantID: tenantID, email: email, link: link, oobCode: oobCode, linkHash: linkHash, linkExpiry: linkExpiry)
        else { return nil }
        try await gateway.call { try await self.store.issue(prepared.record) }
        return prepared.code
    }

    /// What ``issue(tenantID:email:link:oobCode:linkHash:linkExpiry:)`` stores and returns, made
    /// without storing it (for a store that writes it with the link's code:
    /// ``LinkIssueWrite/signInCode``); `nil` when codes are off.
    package func prepare(tenantID: String, email: String, link: String, oobCode: String, linkHash: Data?, linkExpiry: Timestamp)
        throws(ActionError) -> (code: String, record: SignInCodeRecord)?
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
            tenantID: tenantID, email: email, mac: keys.mac(tenantID: tenantID, email: email, code: code), linkHash: linkHash,
            sealedLink: sealed,
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
    /// the try before anything is known of the address. Past a limit (``limitStages(email:clientAddress:now:)``)
    /// the answer is `TOO_MANY_ATTEMPTS_TRY_LATER` with `Retry-After` (the end of the window that refused).
    public func exchange(email given: String?, code typed: String?, tenantID: String, clientAddress: String?) async throws(ActionError)
        -> Exchange
    {
        guard settings.isEnabled else {
            throw ActionError(.operationNotAllowed, "sign-in codes are off on this server (codes.signInCode.digits: 0)")
        }
        guard let given, !given.isEmpty else { throw ActionError.missingEmail }
        guard let email = EmailAddress.canonical(given) else { throw ActionError.invalidEmail }
        guard let typed, let code = Self.normalized(typed, digits: settings.digits) else { throw refused(.wrong) }
        let now = clock.now
        let mac = keys.mac(tenantID: tenantID, email: email, code: code)
        let sealingKey = keys.sealingKey(tenantID: tenantID, email: email, code: code)
        let counted = limitStages(email: email, clientAddress: clientAddress, now: now)
        let stages = counted.map(\.stage)
        let maximumTries = settings.attempts
        let tried = try await gateway.call {
            try await self.store.tryCode(tenantID: tenantID, email: email, now: now, maximumTries: maximumTries, stages: stages)
        }
        let stored: (mac: Data, sealed: Data)?
        switch tried {
        case .limited(let index):
            metrics?.signInCodeExchange(.limited)
            let window = counted[index]
            let left = (window.stage.windowStart + window.length).milliseconds - now.milliseconds
            throw ActionError.tooManyAttempts.retrying(after: Int((left + 999) / 1000))
        case .counted(let mac, let sealed):
            stored = mac.flatMap { mac in sealed.map { (mac, $0) } }
        }
        // Compared in constant time whether or not there is a code (then against a MAC no code has).
        let matches = ConstantTime.equal(stored?.mac ?? Self.noCode, mac)
        guard matches, let stored, let link = keys.open(stored.sealed, with: sealingKey, tenantID: tenantID, email: email) else {
            throw refused(.wrong)
        }
        if let liveLink, try await !liveLink(link) {
            // The link died where its code lives (used, or voided by its owner): the code dies too.
            _ = try await gateway.call { try await self.store.use(tenantID: tenantID, email: email, mac: mac, now: now, givingBack: []) }
            throw refused(.wrong)
        }
        let failures = counted.filter(\.countsFailures).map(\.stage)
        guard
            let sealed = try await gateway.call({
                try await self.store.use(tenantID: tenantID, email: email, mac: mac, now: now, givingBack: failures)
            }),
            let usedLink = keys.open(sealed, with: sealingKey, tenantID: tenantID, email: email)
        else { throw refused(.wrong) }
        metrics?.signInCodeExchange(.exchanged)
        return Exchange(emailLink: usedLink, email: email)
    }

    /// `INVALID_SIGN_IN_CODE`, counted under `outcome`.
    private func refused(_ outcome: ServerMetrics.SignInCodeOutcome) -> ActionError {
        metrics?.signInCodeExchange(outcome)
        return ActionError.invalidSignInCode
    }

    /// One stage of an exchange's counts, with the length of its window (for `Retry-After`) and
    /// whether it counts wrong codes (taken back when the code is right).
    struct CountedStage: Sendable {
        var stage: EventLimitStage
        var length: Duration
        var countsFailures: Bool
    }

    /// What an exchange counts, in order: the client's IP (`limits.signInCodeExchangesPerIPPerHour`,
    /// under its bucket: ``LimitSettings/clientBucket(_:)``), so a client over its own limit spends
    /// nothing of the address's; the address's exchanges in the hour; the address's wrong codes in
    /// the UTC day and in the 30-day window, whatever the tenant and however many mails brought new
    /// codes (so guesses cannot go on at an hourly pace for months: docs/SIGN-IN-CODES.md, "The
    /// rules").
    func limitStages(email: String, clientAddress: String?, now: Timestamp) -> [CountedStage] {
        func stage(_ key: String, _ maximum: Int, _ length: Duration, failures: Bool = false) -> CountedStage {
            CountedStage(
                stage: EventLimitStage(limits: [EventLimit(key: key, maximum: maximum)], windowStart: now.roundedDown(to: length)),
                length: length, countsFailures: failures)
        }
        let (hour, day, thirtyDays) = (Duration.seconds(3600), Duration.seconds(86400), Duration.seconds(30 * 86400))
        var stages: [CountedStage] = []
        if let clientAddress {
            stages.append(stage("sign-in-code:ip:" + limits.clientBucket(clientAddress), limits.signInCodeExchangesPerIPPerHour, hour))
        }
        stages.append(stage("sign-in-code:address:" + email, limits.signInCodeExchangesPerAddressPerHour, hour))
        stages.append(stage("sign-in-code:failures:day:" + email, limits.signInCodeFailuresPerAddressPerDay, day, failures: true))
        stages.append(
            stage(
                EventLimit.longWindowPrefix + "sign-in-code:failures:30d:" + email, limits.signInCodeFailuresPerAddressPer30Days,
                thirtyDays, failures: true))
        return stages
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
