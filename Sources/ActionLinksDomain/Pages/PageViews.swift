// The values each template of `www/templates/` and `www/mail/` reads, as typed structs. A view
// lists the template's names with how to read each (``TemplateView/slots``), so rendering never
// reflects on a value (``CompiledPage``).

/// A view a template of `www/` renders: the names it answers, each read straight from the view.
package protocol TemplateView: Sendable {
    /// The names, in the order a name is looked up (the first of two equal names wins).
    static var slots: [(String, PageSlot<Self>)] { get }
}

/// What every page's layout reads beside the page's own values.
package struct PageFrame: Sendable {
    /// The page's language (`lang`) and its direction (`dir`: `ltr` or `rtl`).
    var language: String
    var direction: String
    /// The `<h1>` and `<title>`.
    package var title: String
    /// The app's name, in the header and the title.
    var appName: String

    /// The layout's names, read through `frame` from a page's view.
    static func slots<View>(_ frame: KeyPath<View, PageFrame> & Sendable) -> [(String, PageSlot<View>)] {
        [
            ("lang", .text { $0[keyPath: frame].language }), ("dir", .text { $0[keyPath: frame].direction }),
            ("title", .text { $0[keyPath: frame].title }), ("appName", .text { $0[keyPath: frame].appName }),
        ]
    }
}

/// A page a template renders: its template's name and the values it reads.
package protocol PageView: TemplateView {
    /// The template in `www/templates/` (without `.mustache`).
    static var template: String { get }
    /// The compiled template among `templates`.
    static func compiled(in templates: PageTemplates) -> CompiledPage<Self>
    /// The language, title and app name of the layout.
    var frame: PageFrame { get set }
}

/// `action.mustache`: the form of a link's mode (sign-in, new password, verify, change, recover).
package struct ActionFormView: PageView {
    package static let template = "action"
    package var frame: PageFrame
    package var intro: String
    var button: String
    var mode: String
    var oobCode: String
    var formToken: String
    var email: String
    var minimumLength: String
    var errorLabel: String
    /// The sign-in form of a browser that already proved the address: one tap, no address asked.
    package var remembered = false
    /// The sign-in form that asks for the address the link was sent to.
    package var emailField: EmailField?
    /// The new-password form.
    package var passwordFields: PasswordFields?
    /// In upstream mode, what the form carries back because nothing about the code is kept here.
    package var upstreamFields: UpstreamFields?
    /// A sign-in link's code (grouped) and the line that says to type it into the app that asked.
    package var signInCode: (line: String, code: String)?

    /// The link's API key, tenant and continue URL, and whether this form retries a call upstream
    /// did not answer.
    package struct UpstreamFields: Sendable, Equatable {
        var apiKey: String
        var tenantID: String?
        var continueURL: String?
        package var retried: Bool

        /// Makes the value from each of its fields.
        package init(apiKey: String, tenantID: String? = nil, continueURL: String? = nil, retried: Bool) {
            self.apiKey = apiKey
            self.tenantID = tenantID
            self.continueURL = continueURL
            self.retried = retried
        }
    }

    package struct EmailField: Sendable {
        var label: String
        var help: String
        var value: String?
        var error: String?

        /// Makes the value from each of its fields.
        package init(label: String, help: String, value: String? = nil, error: String? = nil) {
            self.label = label
            self.help = help
            self.value = value
            self.error = error
        }
    }

    package struct PasswordFields: Sendable {
        var label: String
        /// The policy's lengths.
        var help: String
        var againLabel: String
        var error: String?
        var againError: String?
        /// The policy's enforced character rules, when it has any.
        var rules: String?

        /// Makes the value from each of its fields.
        package init(label: String, help: String, againLabel: String, error: String? = nil, againError: String? = nil, rules: String? = nil)
        {
            self.label = label
            self.help = help
            self.againLabel = againLabel
            self.error = error
            self.againError = againError
            self.rules = rules
        }
    }

    var hasError: Bool { emailField?.error != nil || passwordFields?.error != nil || passwordFields?.againError != nil }

    package static let slots: [(String, PageSlot<Self>)] =
        [
            ("intro", .text { $0.intro }), ("button", .text { $0.button }), ("mode", .text { $0.mode }), ("oobCode", .text { $0.oobCode }),
            ("formToken", .text { $0.formToken }), ("email", .text { $0.email }), ("minimumLength", .text { $0.minimumLength }),
            ("errorLabel", .text { $0.errorLabel }), ("hasError", .flag { $0.hasError }), ("remembered", .flag { $0.remembered }),
            ("askEmail", .flag { $0.emailField != nil }), ("emailLabel", .text { $0.emailField?.label }),
            ("emailHelp", .text { $0.emailField?.help }), ("emailValue", .text { $0.emailField?.value }),
            ("emailError", .text { $0.emailField?.error }), ("askPassword", .flag { $0.passwordFields != nil }),
            ("passwordLabel", .text { $0.passwordFields?.label }), ("passwordHelp", .text { $0.passwordFields?.help }),
            ("passwordRules", .text { $0.passwordFields?.rules }),
            ("passwordAgainLabel", .text { $0.passwordFields?.againLabel }), ("passwordError", .text { $0.passwordFields?.error }),
            ("passwordAgainError", .text { $0.passwordFields?.againError }), ("upstream", .flag { $0.upstreamFields != nil }),
            ("apiKey", .text { $0.upstreamFields?.apiKey }), ("tenantId", .text { $0.upstreamFields?.tenantID }),
            ("continueUrl", .text { $0.upstreamFields?.continueURL }), ("retried", .flag { $0.upstreamFields?.retried ?? false }),
            ("signInCode", .text { $0.signInCode?.code }), ("signInCodeLine", .text { $0.signInCode?.line }),
        ] + PageFrame.slots(\.frame)

    package static func compiled(in templates: PageTemplates) -> CompiledPage<Self> { templates.action }

    /// Makes the value from each of its fields.
    package init(
        frame: PageFrame, intro: String, button: String, mode: String, oobCode: String, formToken: String, email: String,
        minimumLength: String, errorLabel: String, remembered: Bool = false, emailField: EmailField? = nil,
        passwordFields: PasswordFields? = nil, upstreamFields: UpstreamFields? = nil, signInCode: (line: String, code: String)? = nil
    ) {
        self.frame = frame
        self.intro = intro
        self.button = button
        self.mode = mode
        self.oobCode = oobCode
        self.formToken = formToken
        self.email = email
        self.minimumLength = minimumLength
        self.errorLabel = errorLabel
        self.remembered = remembered
        self.emailField = emailField
        self.passwordFields = passwordFields
        self.upstreamFields = upstreamFields
        self.signInCode = signInCode
    }
}

/// `result.mustache`: the end of a flow, with the continue button when there is somewhere to go.
package struct ResultView: PageView {
    package static let template = "result"
    package var frame: PageFrame
    var body: String
    /// The allow-listed continue URL and its button's label.
    var continueLink: (url: String, label: String)?
    /// After an address was recovered upstream, the form that sends a password reset to it.
    var resetOffer: ResetOffer?

    /// What the reset form posts back (nothing about the code is kept here).
    package struct ResetOffer: Sendable {
        var oobCode: String
        var token: String
        var apiKey: String
        var tenantID: String?
        var email: String
        var label: String

        /// Makes the value from each of its fields.
        package init(oobCode: String, token: String, apiKey: String, tenantID: String? = nil, email: String, label: String) {
            self.oobCode = oobCode
            self.token = token
            self.apiKey = apiKey
            self.tenantID = tenantID
            self.email = email
            self.label = label
        }
    }

    package static let slots: [(String, PageSlot<Self>)] =
        [
            ("body", .text { $0.body }), ("continueURL", .text { $0.continueLink?.url }),
            ("continueLabel", .text { $0.continueLink?.label }),
            ("offerReset", .flag { $0.resetOffer != nil }), ("offerCode", .text { $0.resetOffer?.oobCode }),
            ("offerToken", .text { $0.resetOffer?.token }), ("offerApiKey", .text { $0.resetOffer?.apiKey }),
            ("offerTenantId", .text { $0.resetOffer?.tenantID }), ("offerEmail", .text { $0.resetOffer?.email }),
            ("offerLabel", .text { $0.resetOffer?.label }),
        ]
        + PageFrame.slots(\.frame)

    package static func compiled(in templates: PageTemplates) -> CompiledPage<Self> { templates.result }

    /// Makes the value from each of its fields.
    package init(frame: PageFrame, body: String, continueLink: (url: String, label: String)? = nil, resetOffer: ResetOffer? = nil) {
        self.frame = frame
        self.body = body
        self.continueLink = continueLink
        self.resetOffer = resetOffer
    }
}

/// `links.mustache`: the browser fallback of a mobile link.
package struct MobileLinkView: PageView {
    package static let template = "links"
    package var frame: PageFrame
    package var intro: String
    var webLink: String
    var continueWeb: String
    var openApp: String
    var appStore: String
    var playStore: String
    /// "Open in the app": an Android intent or the iOS app's custom scheme.
    package var appLink: String?
    package var appStoreLink: String?
    package var playStoreLink: String?
    /// The Smart App Banner's content (`app-id=..., app-argument=...`).
    package var smartBanner: String?
    /// The Play Store page of an app too old for the link, and its label.
    package var update: (url: String, label: String)?

    package static let slots: [(String, PageSlot<Self>)] =
        [
            ("intro", .text { $0.intro }), ("webLink", .text { $0.webLink }), ("continueWeb", .text { $0.continueWeb }),
            ("openApp", .text { $0.openApp }), ("appStore", .text { $0.appStore }), ("playStore", .text { $0.playStore }),
            ("appLink", .text { $0.appLink }), ("appStoreLink", .text { $0.appStoreLink }), ("playStoreLink", .text { $0.playStoreLink }),
            ("smartBanner", .text { $0.smartBanner }), ("updateLink", .text { $0.update?.url }), ("update", .text { $0.update?.label }),
        ] + PageFrame.slots(\.frame)

    package static func compiled(in templates: PageTemplates) -> CompiledPage<Self> { templates.links }

    /// Makes the value from each of its fields.
    package init(
        frame: PageFrame, intro: String, webLink: String, continueWeb: String, openApp: String, appStore: String, playStore: String,
        appLink: String? = nil, appStoreLink: String? = nil, playStoreLink: String? = nil, smartBanner: String? = nil,
        update: (url: String, label: String)? = nil
    ) {
        self.frame = frame
        self.intro = intro
        self.webLink = webLink
        self.continueWeb = continueWeb
        self.openApp = openApp
        self.appStore = appStore
        self.playStore = playStore
        self.appLink = appLink
        self.appStoreLink = appStoreLink
        self.playStoreLink = playStoreLink
        self.smartBanner = smartBanner
        self.update = update
    }
}

/// `www/mail/message.{html,txt}.mustache`: an email with its link.
struct MailView: TemplateView {
    var language: String
    var direction: String
    var link: String
    var subject: String
    var body: String
    var button: String
    var ignore: String
    /// A sign-in link's code (grouped) and the line that says to type it into the app that asked.
    var signInCode: (line: String, code: String)?

    static let slots: [(String, PageSlot<Self>)] = [
        ("lang", .text { $0.language }), ("dir", .text { $0.direction }), ("link", .text { $0.link }), ("subject", .text { $0.subject }),
        ("body", .text { $0.body }), ("button", .text { $0.button }), ("ignore", .text { $0.ignore }),
        ("signInCode", .text { $0.signInCode?.code }), ("signInCodeLine", .text { $0.signInCode?.line }),
    ]
}
