import ActionLinks
import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores
import ActionLinksTestSupport
import Foundation
import Testing

extension EndToEndTests {
    @Test("association files: JSON from config, ETag, HEAD, 304, never a redirect")
    func associationFiles() async throws {
        try await TestApp.live { app in
            for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association", "/.well-known/assetlinks.json"] {
                let reply = try await app.request("GET", path)
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == "application/json")
                let etag = try #require(reply.header("ETag"))
                #expect(try JSONSerialization.jsonObject(with: reply.body) is [String: Any] || path.hasSuffix("assetlinks.json"))
                let head = try await app.request("HEAD", path)
                #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(reply.body.count))
                #expect(try await app.request("GET", path, headers: ["If-None-Match": etag]).status == 304)
            }
            let aasa = try await app.request("GET", "/.well-known/apple-app-site-association")
            #expect(aasa.text.contains("ABCDE12345.com.example.app") && aasa.text.contains("/__/auth/links*"))
            #expect(!aasa.text.contains("/__/auth/action*"), "web action links stay on the web unless apps.claimActionLinks")
            let assetLinks = try await app.request("GET", "/.well-known/assetlinks.json")
            #expect(assetLinks.text.contains("com.example.app"))
            #expect(try await app.request("GET", "/").text.contains("This domain opens links"))
            #expect(try await app.request("GET", "/assets/style.css").header("Content-Type") == "text/css; charset=utf-8")
            #expect(try await app.request("GET", "/healthz").status == 200)
        }
    }

    @Test("mobile links: the fallback page accepts only inner links to our own handler")
    func mobileLinks() async throws {
        try await TestApp.router { app in
            try await app.createAccount(email: "ned@example.com")
            let (link, code) = try await app.link(
                "VERIFY_EMAIL", email: "ned@example.com",
                extra: [
                    "canHandleCodeInApp": true, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app",
                    "androidMinimumVersion": 12,
                ])
            #expect(link.hasPrefix("https://links.test.example/__/auth/links?link="))
            #expect(ActionCodeLink.parse(link)?.oobCode == code)
            let android = ["User-Agent": "Mozilla/5.0 (Linux; Android 14)"]
            let update = try await app.request("GET", try app.local(link), headers: android)
            #expect(update.status == 200, "\(update.text)")
            #expect(
                update.text.contains("This link needs version 12 or newer"), "the link asks for a newer Android app than may be installed")
            #expect(update.text.contains("play.google.com/store/apps/details?id=com.example.app") && !update.text.contains("intent://"))
            let page = try await app.request("GET", try app.local(link))
            #expect(
                page.text.contains("apps.apple.com/app/id1234567890")
                    && page.text.contains("play.google.com/store/apps/details?id=com.example.app"))
            #expect(page.text.contains("app-argument=https://links.test.example/__/auth/action?"))
            let (plain, _) = try await app.link(
                "VERIFY_EMAIL", email: "ned@example.com", extra: ["canHandleCodeInApp": true, "androidPackageName": "com.example.app"])
            #expect(
                try await app.request("GET", try app.local(plain), headers: android).text.contains(
                    "intent://links.test.example/__/auth/action?"))
            #expect(try await app.api("resetPassword", ["oobCode": code]).status == 400, "issuing a new link retired the first")
            let foreign =
                "/__/auth/links?link="
                + HTMLForm.encode(component: "https://evil.example.net/__/auth/action?mode=verifyEmail&oobCode=\(code)")
            #expect(try await app.request("GET", foreign).status == 400)
            let (last, lastCode) = try await app.link(
                "VERIFY_EMAIL", email: "ned@example.com", extra: ["canHandleCodeInApp": true, "iOSBundleId": "com.example.app"])
            #expect(try await app.request("GET", try app.local(last)).status == 200)
            let iPhone = try await app.request(
                "GET", try app.local(last), headers: ["User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"])
            #expect(
                iPhone.text.contains("href=\"com.example.app://google/link/?deep_link_id=http"),
                "open in the app: the bundle ID's custom scheme")
            #expect(!iPhone.text.contains("play.google.com"), "no Play Store link on an iPhone")
            #expect(try await app.api("resetPassword", ["oobCode": lastCode]).status == 200, "the fallback page consumed nothing")
        }
    }

    @Test("tenants: a tenant's code works only under that tenant")
    func tenants() async throws {
        try await TestApp.router(environment: ["ACTIONLINKS_TENANTS": "tenant-a,tenant-b"]) { app in
            let create = try await app.api("create", ["email": "ola@example.com"], admin: true, tenant: "tenant-a")
            #expect(create.status == 200)
            let reply = try await app.api(
                "sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "ola@example.com", "returnOobLink": true], admin: true,
                tenant: "tenant-a")
            let link = try #require(reply.json["oobLink"] as? String, "\(reply.text)")
            let parsed = try #require(ActionCodeLink.parse(link))
            #expect(parsed.tenantID == "tenant-a")
            #expect(try await app.api("update", ["oobCode": parsed.oobCode], tenant: "tenant-b").errorCode == "INVALID_OOB_CODE")
            #expect(try await app.api("update", ["oobCode": parsed.oobCode], tenant: "tenant-a").json["emailVerified"] as? Bool == true)
        }
    }
}
