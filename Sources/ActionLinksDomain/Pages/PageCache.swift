import ActionLinks
import ActionLinksConfiguration
import NIOCore
import Synchronization

/// What the action pages render once and keep: only what no code's state can
/// change. A code is looked up for every request, and which page it gets (a form, expired, used,
/// invalid) is decided from that lookup each time; what is kept here is the page's bytes once the
/// decision is made.
///
/// - The pages without a form (``PageOutcome``: expired, invalid, unavailable…) per outcome
///   and language: their text names the app and nothing else.
/// - The action form of each mode, language, remembered or not, with or without a new address,
///   compiled to static bytes around the values that change from one code to the next
///   (``FormValues``: the code, the form token, the addresses), which are filled in per request.
///
/// The settings and templates they are made from are those of the pages that own the cache, fixed
/// for its life. Only languages there are strings for are kept, so the cache is bounded (outcomes × modes
/// × languages × 4).
package final class PageCache: Sendable {
    package init() {}

    package struct OutcomeKey: Hashable {
        var outcome: PageOutcome
        var language: String

        /// Makes the value from each of its fields.
        package init(outcome: PageOutcome, language: String) {
            self.outcome = outcome
            self.language = language
        }
    }

    package struct FormKey: Hashable {
        package var mode: ActionCodeLink.Mode
        package var language: String
        package var remembered: Bool
        /// Whether the record has a new address (a text without one keeps its `{{newEmail}}`).
        package var newEmail: Bool
        /// The password policy a new-password form states (nil for the other modes).
        package var passwords: PasswordSettings?
        /// Whether the page shows a sign-in code.
        package var signInCode = false

        /// Makes the value from each of its fields.
        package init(
            mode: ActionCodeLink.Mode, language: String, remembered: Bool, newEmail: Bool, passwords: PasswordSettings? = nil,
            signInCode: Bool = false
        ) {
            self.mode = mode
            self.language = language
            self.remembered = remembered
            self.newEmail = newEmail
            self.passwords = passwords
            self.signInCode = signInCode
        }
    }

    private let outcomes = Mutex<[OutcomeKey: ByteBuffer]>([:])
    private let forms = Mutex<[FormKey: FormProgram?]>([:])

    /// How many outcome pages and form programs are kept.
    var counts: (outcomes: Int, forms: Int) { (outcomes.withLock { $0.count }, forms.withLock { $0.count }) }

    /// The outcome page's body for `key`, rendered by `render` the first time.
    package func outcome(_ key: OutcomeKey, render: () -> ByteBuffer) -> ByteBuffer {
        if let page = outcomes.withLock({ $0[key] }) { return page }
        let page = render()
        outcomes.withLock { $0[key] = page }
        return page
    }

    /// At most this many forms are kept: the policies of tenants made through the API are as many
    /// as the admin makes; beyond it a form is built for its request and not kept.
    static let formCapacity = 1024

    /// The compiled form for `key` (`nil`: it does not compile, and is rendered for each request),
    /// built by `build` the first time.
    package func form(_ key: FormKey, build: () -> FormProgram?) -> FormProgram? {
        if let program = forms.withLock({ $0[key] }) { return program }
        let program = build()
        forms.withLock { if $0.count < Self.formCapacity { $0[key] = program } }
        return program
    }
}

/// The values of an action form that change from one code to the next.
package struct FormValues: Sendable {
    /// The code (the link's `oobCode`).
    package var code: String
    package var formToken: String
    /// The record's address (the password form's hidden username).
    package var email: String
    /// The addresses as the page's text shows them (masked in upstream mode).
    package var shownEmail: String
    package var shownNewEmail: String?
    /// A sign-in link's code, grouped, while it can be exchanged (``SignInCodes/shownCode(oobCode:record:now:)``).
    package var signInCode: String? = nil

    package static let count = 6

    /// The value of slot `index` (the order of ``marked(newEmail:)``).
    func value(_ index: Int) -> String? {
        switch index {
        case 0: code
        case 1: formToken
        case 2: email
        case 3: shownEmail
        case 4: shownNewEmail
        default: signInCode
        }
    }

    /// Each value a ``PageMarker`` of its slot.
    package static func marked(newEmail: Bool, signInCode: Bool) -> FormValues {
        probe(newEmail: newEmail, signInCode: signInCode) { PageMarker.text($0) }
    }

    /// Each value `value(slot)`.
    package static func probe(newEmail: Bool, signInCode: Bool, _ value: (Int) -> String) -> FormValues {
        FormValues(
            code: value(0), formToken: value(1), email: value(2), shownEmail: value(3), shownNewEmail: newEmail ? value(4) : nil,
            signInCode: signInCode ? value(5) : nil)
    }

    /// Makes the value from each of its fields.
    package init(
        code: String, formToken: String, email: String, shownEmail: String, shownNewEmail: String? = nil, signInCode: String? = nil
    ) {
        self.code = code
        self.formToken = formToken
        self.email = email
        self.shownEmail = shownEmail
        self.shownNewEmail = shownNewEmail
        self.signInCode = signInCode
    }
}

/// An action form as static bytes and ``FormValues`` slots.
package struct FormProgram: Sendable {
    let pieces: [CompiledPage<ActionFormView>.Piece]
    let staticBytes: Int

    /// The page with `values`.
    package func render(_ values: FormValues) -> ByteBuffer {
        var valueBytes = 0
        for index in 0..<FormValues.count { valueBytes += values.value(index)?.utf8.count ?? 0 }
        var buffer = ByteBuffer()
        // Escaping may lengthen a value: room for a few entities before the buffer grows.
        buffer.reserveCapacity(staticBytes + valueBytes + 64)
        for piece in pieces {
            switch piece {
            case .bytes(let bytes): buffer.writeBytes(bytes)
            case .value(let slot, let escaped):
                guard let value = values.value(slot) else { continue }
                if escaped { HTMLEscaping.write(value, into: &buffer) } else { buffer.writeString(value) }
            }
        }
        return buffer
    }

    /// Makes the value from each of its fields.
    package init(pieces: [CompiledPage<ActionFormView>.Piece], staticBytes: Int) {
        self.pieces = pieces
        self.staticBytes = staticBytes
    }
}

/// What a page without a form says: the outcome of a link that cannot be completed (expired, used,
/// invalid), of a store that cannot be reached, and the like.
package enum PageOutcome: String {
    case expired, used, invalid, unavailable, form, notFound
    /// The account is disabled; too many attempts, try later.
    case disabled, tooMany
    /// Upstream mode: the link may have worked before an answer was lost.
    case maybeDone
}
