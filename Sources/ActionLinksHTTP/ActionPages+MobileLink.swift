import ActionLinks
import ActionLinksConfiguration
import ActionLinksDomain
import ActionLinksHeaders
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

// MARK: /__/auth/links: a mobile link's browser fallback

extension ActionPages {
    /// The browser fallback of a mobile link: only an inner link to our own action handler is shown.
    /// The code is looked up (never consumed): an expired or used link says so here, and a link that
    /// asks for a newer Android app than can open it gets the update page.
    func mobileLink(_ request: Request, context: ServerRequestContext) async -> Response {
        let acceptLanguage = request.headers[.acceptLanguage]
        let language = templates.language(requested: nil, acceptLanguage: acceptLanguage)
        // The library unwraps the wrapper exactly as the SDKs do, decoding `link` once. Only a
        // wrapper around a link to our own action handler, with nothing nested further, is shown.
        let (layers, unwrapped) = LinkUnwrapper.unwrap("https://link.invalid" + request.uri.string)
        guard layers.count == 2, layers[0].kind == .mobileLinkWrapper, layers[0].innerParameter == "link",
            case .success(let parts) = unwrapped, let host = parts.host?.lowercased(), parts.path == ActionCodeLink.actionPath,
            let domain = settings.linkDomains.first(where: { $0.host == host && $0.port == parts.port.flatMap { Int($0) } }),
            let link = ActionCodeLink.parse(parts.string)
        else { return outcome(.invalid, language) }
        let record: ActionCodeRecord
        do {
            record = try await completer.check(code: link.oobCode, tenantID: link.tenantID ?? "")
        } catch {
            return failure(error, templates.language(requested: link.languageCode, acceptLanguage: acceptLanguage))
        }
        let pageLanguage = templates.language(requested: record.languageCode ?? link.languageCode, acceptLanguage: acceptLanguage)
        guard record.mode == link.mode else { return outcome(.invalid, pageLanguage) }
        let appSettings = AppSettings(json: record.appSettings)
        // Every URL on this page is rebuilt from what was stored with the code: the wrapper's own
        // parameters (a continueUrl appended to the link, say) never reach the page. The inner
        // link's key stays when it is one of the project's (the key of the client that asked).
        let webLink = ActionCodeLink(
            mode: record.mode, oobCode: link.oobCode,
            apiKey: link.apiKey.flatMap { settings.project.apiKey(matching: $0)?.key } ?? settings.project.apiKey,
            continueURL: record.continueURL.flatMap { policy.evaluate($0).url }, languageCode: record.languageCode,
            tenantID: record.tenantID
        ).webLink(on: domain)
        let userAgent = request.headers[.userAgent] ?? ""
        let onAndroid = userAgent.contains("Android")
        let onIOS = !onAndroid && (userAgent.contains("iPhone") || userAgent.contains("iPad") || userAgent.contains("iPod"))
        let appName = settings.project.appName
        var values = ["appName": appName]
        var view = MobileLinkView(
            frame: templates.frame(pageLanguage, title: templates.text("links.title", pageLanguage, values), appName: appName),
            intro: templates.text("links.intro", pageLanguage, values), webLink: webLink,
            continueWeb: templates.text("links.continueWeb", pageLanguage), openApp: templates.text("links.openApp", pageLanguage),
            appStore: templates.text("links.appStore", pageLanguage), playStore: templates.text("links.playStore", pageLanguage))
        let apple = apps.appleApps.first { $0.bundleID == appSettings.iOSBundleId } ?? apps.appleApps.first
        let android =
            apps.androidApps.first { $0.packageName == appSettings.androidPackageName } ?? apps.androidApps.first
        if let apple, let storeID = apple.appStoreID {
            view.smartBanner = "app-id=\(storeID), app-argument=\(webLink)"
            if !onAndroid { view.appStoreLink = "https://apps.apple.com/app/id" + storeID }
        }
        if let android, !onIOS { view.playStoreLink = "https://play.google.com/store/apps/details?id=" + android.packageName }
        // Checked again here: a code issued before versions were checked may carry free text.
        if onAndroid, let android, let minimum = appSettings.androidMinimumVersion, !minimum.isEmpty, minimum.utf8.count <= 10,
            minimum.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        {
            // The link asks for a newer app than the one that may be installed: update first.
            values["version"] = minimum
            view.frame.title = templates.text("minimumVersion.title", pageLanguage, values)
            view.intro = templates.text("minimumVersion.intro", pageLanguage, values)
            view.update = (
                "https://play.google.com/store/apps/details?id=" + android.packageName,
                templates.text("minimumVersion.update", pageLanguage)
            )
            view.playStoreLink = nil
            return html(templates.render(view), status: .ok)
        }
        if onAndroid, let android, let query = webLink.split(separator: "?", maxSplits: 1).last {
            view.appLink =
                "intent://\(domain.description)\(ActionCodeLink.actionPath)?\(query)#Intent;scheme=\(domain.scheme);package=\(android.packageName);"
                + "S.browser_fallback_url=\(PercentEncoding.encodeComponent(webLink));end"
        } else if onIOS, let bundle = appSettings.iOSBundleId, apps.appleApps.contains(where: { $0.bundleID == bundle }) {
            // A universal link to the page's own domain stays in Safari; the custom scheme that
            // Firebase Dynamic Links used (the bundle ID) hands the link to the app.
            view.appLink = "\(bundle)://google/link/?deep_link_id=\(PercentEncoding.encodeComponent(webLink))"
        }
        return html(templates.render(view), status: .ok)
    }
}
