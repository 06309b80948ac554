import Mustache

// The values each template of `www/templates/` and `www/mail/` reads, as typed structs. A view
// answers the template's names itself (``MustacheParent``), so rendering never reflects on a value.

/// What every page's layout reads beside the page's own values.
struct PageFrame: Sendable {
    /// The page's language (`lang`) and its direction (`dir`: `ltr` or `rtl`).
    var language: String
    var direction: String
    /// The `<h1>` and `<title>`.
    var title: String
    /// The app's name, in the header and the title.
    var appName: String

    func child(named name: String) -> Any? {
        switch name {
        case "lang": language
        case "dir": direction
        case "title": title
        case "appName": appName
        default: nil
        }
    }
}

/// A page a template renders: its template's name and the values it reads.
protocol PageView: MustacheParent, Sendable {
    /// The template in `www/templates/` (without `.mustache`).
    static var template: String { get }
    /// The language, title and app name of the layout.
    var frame: PageFrame { get set }
}

/// `action.mustache`: the form of a link's mode (sign-in, new password, verify, change, recover).
struct ActionFormView: PageView {
    static let template = "action"
    var frame: PageFrame
    var intro: String
    var button: String
    var mode: String
    var oobCode: String
    var formToken: String
    var email: String
    var minimumLength: String
    var errorLabel: String
    /// The sign-in form of a browser that already proved the address: one tap, no address asked.
    var remembered = false
    /// The sign-in form that asks for the address the link was sent to.
    var emailField: EmailField?
    /// The new-password form.
    var passwordFields: PasswordFields?

    struct EmailField: Sendable {
        var label: String
        var help: String
        var value: String?
        var error: String?
    }

    struct PasswordFields: Sendable {
        var label: String
        var help: String
        var againLabel: String
        var error: String?
        var againError: String?
    }

    var hasError: Bool { emailField?.error != nil || passwordFields?.error != nil || passwordFields?.againError != nil }

    func child(named name: String) -> Any? {
        switch name {
        case "intro": intro
        case "button": button
        case "mode": mode
        case "oobCode": oobCode
        case "formToken": formToken
        case "email": email
        case "minimumLength": minimumLength
        case "errorLabel": errorLabel
        case "hasError": hasError
        case "remembered": remembered
        case "askEmail": emailField != nil
        case "emailLabel": emailField?.label
        case "emailHelp": emailField?.help
        case "emailValue": emailField?.value
        case "emailError": emailField?.error
        case "askPassword": passwordFields != nil
        case "passwordLabel": passwordFields?.label
        case "passwordHelp": passwordFields?.help
        case "passwordAgainLabel": passwordFields?.againLabel
        case "passwordError": passwordFields?.error
        case "passwordAgainError": passwordFields?.againError
        default: frame.child(named: name)
        }
    }
}

/// `result.mustache`: the end of a flow, with the continue button when there is somewhere to go.
struct ResultView: PageView {
    static let template = "result"
    var frame: PageFrame
    var body: String
    /// The allow-listed continue URL and its button's label.
    var continueLink: (url: String, label: String)?

    func child(named name: String) -> Any? {
        switch name {
        case "body": body
        case "continueURL": continueLink?.url
        case "continueLabel": continueLink?.label
        default: frame.child(named: name)
        }
    }
}

/// `links.mustache`: the browser fallback of a mobile link.
struct MobileLinkView: PageView {
    static let template = "links"
    var frame: PageFrame
    var intro: String
    var webLink: String
    var continueWeb: String
    var openApp: String
    var appStore: String
    var playStore: String
    /// "Open in the app": an Android intent or the iOS app's custom scheme.
    var appLink: String?
    var appStoreLink: String?
    var playStoreLink: String?
    /// The Smart App Banner's content (`app-id=..., app-argument=...`).
    var smartBanner: String?
    /// The Play Store page of an app too old for the link, and its label.
    var update: (url: String, label: String)?

    func child(named name: String) -> Any? {
        switch name {
        case "intro": intro
        case "webLink": webLink
        case "continueWeb": continueWeb
        case "openApp": openApp
        case "appStore": appStore
        case "playStore": playStore
        case "appLink": appLink
        case "appStoreLink": appStoreLink
        case "playStoreLink": playStoreLink
        case "smartBanner": smartBanner
        case "updateLink": update?.url
        case "update": update?.label
        default: frame.child(named: name)
        }
    }
}

/// `www/mail/message.{html,txt}.mustache`: an email with its link.
struct MailView: MustacheParent, Sendable {
    var language: String
    var direction: String
    var link: String
    var subject: String
    var body: String
    var button: String
    var ignore: String

    func child(named name: String) -> Any? {
        switch name {
        case "lang": language
        case "dir": direction
        case "link": link
        case "subject": subject
        case "body": body
        case "button": button
        case "ignore": ignore
        default: nil
        }
    }
}
