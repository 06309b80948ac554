#!/usr/bin/env python3
"""The hosted pages in headless Chromium against a running server, by clicking.

Every flow runs in every language (en, ru, ja, ar) in a 320 px wide mobile viewport with JavaScript
turned off (Chrome's content setting; a check page proves it is off). Every page the flows reach is
also checked by axe-core (3.1 from axe-selenium-python and 4.4 from axe-core-python), in light and
dark colour schemes, in a second browser session that has JavaScript on: axe is JavaScript, and
with scripts blocked its promises and timers do not run. The second session loads the exact HTML the first one shows (same origin, same stylesheet), so both see
the same page. Screenshots of every page in English and Arabic go to --screenshots.

Run by Tests/ActionLinksServerTests/EndToEnd/BrowserTests.swift, which starts the server:
    python3 Tests/Browser/pages_test.py --origin http://localhost:PORT --expiring-origin http://localhost:PORT2 \\
        --policy-origin http://localhost:PORT3 --screenshots DIR
Exit status 0 when every check passed; otherwise 1, with the failures listed.
"""

import argparse
import json
import os
import re
import sys
import time
import traceback
import urllib.error
import urllib.request

try:
    import axe_core_python
    from axe_selenium_python import Axe
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.wait import WebDriverWait
except ImportError as error:  # the Swift test turns this into an install hint
    print(f"MISSING-DEPENDENCY: {error}; pip install -r Tests/Browser/requirements.txt", file=sys.stderr)
    sys.exit(3)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LANGUAGES = ["en", "ru", "ja", "ar"]
SCREENSHOT_LANGUAGES = {"en", "ar"}
PROJECT = "demo-actionlinks"
CONTINUE_URL = "https://app.example.com/done"
WIDTH = 320
# Addresses are unique per run, so the script can run again against the same server.
RUN = str(int(time.time() * 1000) % 100000000)
ISOLATES = re.compile("[\u2068\u2069]")

# axe-core 3.1 as axe-selenium-python ships it, and axe-core 4.4 (WCAG 2.1 rules) from axe-core-python.
AXE_SCRIPTS = {
    "axe 3.1": os.path.join(os.path.dirname(sys.modules["axe_selenium_python"].__file__), "node_modules", "axe-core", "axe.min.js"),
    "axe 4.4": os.path.join(os.path.dirname(axe_core_python.__file__), "axe.min.js"),
}

STRINGS = {}
for language in LANGUAGES:
    with open(os.path.join(ROOT, "www", "strings", language + ".json"), encoding="utf-8") as handle:
        STRINGS[language] = json.load(handle)


def text(language, key, **values):
    """A page string as the server fills it (without the bidi isolates, which tests strip too)."""
    result = STRINGS[language][key]
    for name, value in values.items():
        result = result.replace("{{" + name + "}}", str(value))
    return result


def plain(value):
    return ISOLATES.sub("", value).strip()


def totp(secret_base32, step):
    """RFC 6238's code (SHA-1, 6 digits) of the authenticator app holding `secret_base32`."""
    import base64, hashlib, hmac, struct
    secret = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    digest = hmac.new(secret, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)


class Failures:
    def __init__(self):
        self.items = []
        self.checks = 0

    def check(self, condition, message):
        self.checks += 1
        if not condition:
            self.items.append(message)
            print("FAIL: " + message, flush=True)
        return condition


class Server:
    """REST calls as the admin, the way a backend issues links."""

    def __init__(self, origin):
        self.origin = origin.rstrip("/")

    def call(self, path, body, headers=None):
        request = urllib.request.Request(
            self.origin + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": "Bearer owner", **(headers or {})})
        try:
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{path}: {error.code} {error.read().decode()}") from None

    def client_call(self, path, body, headers=None):
        """A call as an app makes it: the API key, no admin credential."""
        request = urllib.request.Request(
            f"{self.origin}{path}?key=demo-api-key", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return {"status": error.code, **json.loads(error.read().decode() or "{}")}

    def create_account(self, email, password=None, verified=False):
        body = {"email": email, "emailVerified": verified}
        if password:
            body["password"] = password
        return self.call(f"/v1/projects/{PROJECT}/accounts", body)

    def link(self, request_type, email, language, **extra):
        return self.link_and_code(request_type, email, language, **extra)[0]

    def link_and_code(self, request_type, email, language, **extra):
        """The link returned to the admin, and its sign-in code (None for other modes)."""
        body = {"requestType": request_type, "email": email, "returnOobLink": True, **extra}
        reply = self.call(f"/v1/projects/{PROJECT}/accounts:sendOobCode", body, {"X-Firebase-Locale": language})
        return reply["oobLink"], reply.get("signInCode")

    def listed_links(self):
        with urllib.request.urlopen(f"{self.origin}/emulator/v1/projects/{PROJECT}/oobCodes") as response:
            return json.loads(response.read())["oobCodes"]

    def lookup(self, email):
        users = self.call(f"/v1/projects/{PROJECT}/accounts:lookup", {"email": [email]}).get("users") or []
        return users[0] if users else None


def make_driver(javascript):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--lang=en-US",
                     "--hide-scrollbars", "--font-render-hinting=none"]:
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
    driver.set_page_load_timeout(120)
    set_viewport(driver, 720)
    return driver


def set_viewport(driver, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": True})


def set_browser(driver, user_agent=None, accept_language="en-US,en;q=0.9"):
    agent = user_agent or driver.execute_cdp_cmd("Browser.getVersion", {})["userAgent"].replace("Headless", "")
    driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": accept_language})


ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36"
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"


class Pages:
    def __init__(self, arguments):
        self.server = Server(arguments.origin)
        self.expiring = Server(arguments.expiring_origin)
        self.policy = Server(arguments.policy_origin) if arguments.policy_origin else None
        self.screenshots = arguments.screenshots
        os.makedirs(self.screenshots, exist_ok=True)
        self.failures = Failures()
        self.flow = make_driver(javascript=False)
        self.auditor = make_driver(javascript=True)
        self.audited = 0
        self.pages_seen = 0

    def close(self):
        for driver in (self.flow, self.auditor):
            try:
                driver.quit()
            except Exception:
                pass

    # Each page the flows reach passes through here.
    def page(self, name, language, title_key, **values):
        """Checks the page the flow browser shows, audits it, and screenshots it."""
        driver, check = self.flow, self.failures.check
        self.pages_seen += 1
        where = f"[{language}] {name}"
        root = driver.find_element(By.TAG_NAME, "html")
        check(root.get_attribute("lang") == language, f"{where}: lang is {root.get_attribute('lang')!r}")
        expected_dir = "rtl" if language == "ar" else "ltr"
        check(root.get_attribute("dir") == expected_dir, f"{where}: dir is {root.get_attribute('dir')!r}")
        headings = driver.find_elements(By.TAG_NAME, "h1")
        heading = plain(headings[0].text) if headings else ""
        expected = plain(text(language, title_key, **values))
        check(heading == expected, f"{where}: the heading is {heading!r}, expected {expected!r}")
        check(len(driver.find_elements(By.TAG_NAME, "main")) == 1, f"{where}: one main landmark")
        # Readable at 320 px: nothing wider than the viewport (WebDriver scripts run even with page scripts off).
        width = driver.execute_script("return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
        check(width <= WIDTH, f"{where}: the page is {width} px wide at a {WIDTH} px viewport")
        self.audit(where)
        if language in SCREENSHOT_LANGUAGES:
            self.screenshot(f"{language}-{name}")

    def screenshot(self, name):
        driver = self.flow
        height = driver.execute_script("return Math.max(document.documentElement.scrollHeight, 480)")
        set_viewport(driver, min(height, 2400))
        driver.save_screenshot(os.path.join(self.screenshots, name + ".png"))
        set_viewport(driver, 720)

    def audit(self, where):
        """axe-core on the same HTML, same origin, in the JavaScript session; light and dark."""
        html = self.flow.page_source
        auditor = self.auditor
        auditor.get(self.server.origin.replace("127.0.0.1", "localhost") + "/")
        auditor.execute_script("document.open(); document.write(arguments[0]); document.close();", html)
        deadline = time.time() + 60
        while time.time() < deadline:
            ready = auditor.execute_script(
                "return document.readyState === 'complete' && document.styleSheets.length > 0 && document.styleSheets[0].cssRules.length > 0")
            if ready:
                break
            time.sleep(0.05)
        else:
            self.failures.check(False, f"{where}: the stylesheet did not load in the audit session")
        for scheme in ("light", "dark"):
            auditor.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            for version, script in AXE_SCRIPTS.items():
                axe = Axe(auditor, script_url=script)
                axe.inject()
                results = axe.run()
                self.audited += 1
                for violation in results["violations"]:
                    nodes = "; ".join(" ".join(map(str, node["target"])) + " → " + (node.get("failureSummary") or "").replace("\n", " ")
                                      for node in violation["nodes"][:3])
                    self.failures.check(False, f"{where} ({scheme}, {version}): {violation['id']}: {violation['help']}: {nodes}")

    # Helpers for clicking.
    def open(self, url):
        self.flow.get(url)

    def fill(self, field_id, value):
        element = self.flow.find_element(By.ID, field_id)
        element.clear()
        element.send_keys(value)

    def click(self, element):
        """Clicks and waits for the next page (no JavaScript: every click that matters navigates)."""
        old = self.flow.find_element(By.TAG_NAME, "html")
        element.click()

        def replaced(driver):
            try:
                old.is_enabled()
                return False
            except WebDriverException:
                # Stale, or (while the documents swap) "node does not belong to the document".
                return True

        def loaded(driver):
            try:
                return driver.execute_script("return document.readyState") == "complete"
            except WebDriverException:
                return False

        WebDriverWait(self.flow, 60).until(replaced)
        WebDriverWait(self.flow, 60).until(loaded)

    def submit(self, server=None):
        self.click(self.flow.find_element(By.CSS_SELECTOR, "form button[type=submit]"))
        # After the first request the code lives in the form, never in a URL.
        url = self.flow.current_url
        self.failures.check(url == (server or self.server).origin + "/__/auth/action", f"the form posted to {url}")

    def field_error(self, field_id):
        """The error tied to a field: aria-invalid and an aria-describedby that names a shown error."""
        element = self.flow.find_element(By.ID, field_id)
        if element.get_attribute("aria-invalid") != "true":
            return None
        for reference in (element.get_attribute("aria-describedby") or "").split():
            described = self.flow.find_elements(By.ID, reference)
            if described and "error" in (described[0].get_attribute("class") or ""):
                return plain(described[0].text)
        return None

    def continue_href(self):
        buttons = self.flow.find_elements(By.CSS_SELECTOR, "main a.button")
        return buttons[0].get_attribute("href") if buttons else None

    # The flows.
    def sign_in(self, language):
        check = self.failures.check
        email = f"signin-{language}-{RUN}@example.com"
        set_browser(self.flow)
        # No continue URL: the page itself signs in. (With one, the link's GET goes on to the app's
        # page, whose Firebase SDK completes it: Tests/Browser/js_sdk_test.py.)
        link, code = self.server.link_and_code("EMAIL_SIGNIN", email, language)
        app = "Example App"
        # Another device: this browser never proved the address, so the page asks for it. It also
        # shows the mail's sign-in code, for the app that asked on another device.
        self.open(link)
        shown = self.flow.find_elements(By.CSS_SELECTOR, "main .sign-in-code")
        check(code is not None and len(shown) == 1 and shown[0].text == code[:3] + " " + code[3:],
              f"[{language}] sign-in: the page shows the code {code!r}, grouped: {[e.text for e in shown]}")
        line = self.flow.find_elements(By.CSS_SELECTOR, "main .sign-in-code-line")
        check(len(line) == 1 and plain(line[0].text) == plain(text(language, "signInCode.line")),
              f"[{language}] sign-in: the code's line in the page's language: {[e.text for e in line]}")
        self.page("signin-email", language, "signIn.title", appName=app)
        self.submit()
        check(self.field_error("email") == plain(text(language, "errorLabel")) + ": " + plain(text(language, "emailMissing")),
              f"[{language}] sign-in: an empty address is refused at the field: {self.field_error('email')!r}")
        self.page("signin-email-missing", language, "signIn.title", appName=app)
        self.fill("email", "someone.else@example.com")
        self.submit()
        error = self.field_error("email") or ""
        check(plain(text(language, "signIn.emailMismatch")) in error, f"[{language}] sign-in: another address is refused: {error!r}")
        check("oobCode" not in self.flow.current_url, f"[{language}] sign-in: no code in the URL after the POST")
        self.page("signin-email-mismatch", language, "signIn.title", appName=app)
        self.fill("email", email.upper())
        self.submit()
        self.page("signin-done", language, "signIn.done.title")
        check(self.server.lookup(email)["emailVerified"] is True, f"[{language}] sign-in: the account is verified")
        # The same device, next time: the address is known, one tap signs in.
        link = self.server.link("EMAIL_SIGNIN", email, language)
        self.open(link)
        check(not self.flow.find_elements(By.ID, "email"), f"[{language}] sign-in on the same device: no address to type")
        intro = plain(self.flow.find_element(By.CSS_SELECTOR, "main p").text)
        check(intro == plain(text(language, "signIn.knownIntro", appName=app, email=email)), f"[{language}] sign-in on the same device: {intro!r}")
        self.page("signin-same-device", language, "signIn.title", appName=app)
        self.submit()
        self.page("signin-same-device-done", language, "signIn.done.title")

    def reset_password(self, language):
        check = self.failures.check
        email = f"reset-{language}-{RUN}@example.com"
        self.server.create_account(email, password="first-password-1", verified=True)
        link = self.server.link("PASSWORD_RESET", email, language, continueUrl=CONTINUE_URL)
        self.open(link)
        self.page("reset-form", language, "resetPassword.title")
        help_text = plain(self.flow.find_element(By.ID, "password-help").text)
        check(help_text == plain(text(language, "passwordHelp", minimum=8)), f"[{language}] reset: the policy is shown: {help_text!r}")
        self.fill("password", "short")
        self.fill("password-again", "short")
        self.submit()
        error = self.field_error("password") or ""
        check(plain(text(language, "passwordTooShort", minimum=8)) in error, f"[{language}] reset: a weak password is refused at its field: {error!r}")
        self.page("reset-weak", language, "resetPassword.title")
        self.fill("password", "a long enough password")
        self.fill("password-again", "a different long password")
        self.submit()
        error = self.field_error("password-again") or ""
        check(plain(text(language, "passwordsDiffer")) in error, f"[{language}] reset: different passwords are refused at the second field: {error!r}")
        check(self.field_error("password") is None, f"[{language}] reset: the first field is fine")
        self.page("reset-mismatch", language, "resetPassword.title")
        self.fill("password", "a long enough password")
        self.fill("password-again", "a long enough password")
        self.submit()
        self.page("reset-done", language, "resetPassword.done.title", appName="Example App")
        check(self.continue_href() == CONTINUE_URL, f"[{language}] reset: continue button")
        # The used link, opened again.
        self.open(link)
        self.page("error-used-link", language, "error.invalid.title")

    def reset_password_policy(self, language):
        """The reset page of a server that enforces a policy (--policy-origin: 10 characters, an
        upper-case letter and a digit): stated in the page's language, a weak password refused at
        its field with what is missing, then a compliant one taken."""
        if not self.policy:
            return
        check = self.failures.check
        email = f"policy-{language}-{RUN}@example.com"
        self.policy.create_account(email, password="Original-pass-1", verified=True)
        self.open(self.policy.link("PASSWORD_RESET", email, language))
        self.page("reset-policy-form", language, "resetPassword.title")
        separator = text(language, "listSeparator")
        rules = separator.join([text(language, "passwordRule.uppercase"), text(language, "passwordRule.numeric")])
        help_text = plain(self.flow.find_element(By.ID, "password-help").text)
        check(help_text == plain(text(language, "passwordHelp", minimum=10)), f"[{language}] policy: the lengths are stated: {help_text!r}")
        rules_text = plain(self.flow.find_element(By.ID, "password-rules").text)
        check(rules_text == plain(text(language, "passwordHelpRules", rules=rules)), f"[{language}] policy: the rules are stated: {rules_text!r}")
        described = self.flow.find_element(By.ID, "password").get_attribute("aria-describedby") or ""
        check("password-rules" in described.split(), f"[{language}] policy: the field is described by its rules: {described!r}")
        self.fill("password", "only lower case")
        self.fill("password-again", "only lower case")
        self.submit(self.policy)
        error = self.field_error("password") or ""
        check(plain(text(language, "passwordUnmet", rules=rules)) in error, f"[{language}] policy: what is missing, at the field: {error!r}")
        self.page("reset-policy-weak", language, "resetPassword.title")
        self.fill("password", "Compliant-pass-1")
        self.fill("password-again", "Compliant-pass-1")
        self.submit(self.policy)
        self.page("reset-policy-done", language, "resetPassword.done.title", appName="Example App")

    def verify_email(self, language):
        check = self.failures.check
        email = f"verify-{language}-{RUN}@example.com"
        self.server.create_account(email)
        link = self.server.link("VERIFY_EMAIL", email, language)
        # Two copies of the form (a double tap, the back button): the second submission changes nothing.
        self.open(link)
        first = self.flow.current_window_handle
        self.flow.switch_to.new_window("tab")
        set_viewport(self.flow, 720)
        self.open(link)
        second = self.flow.current_window_handle
        self.flow.switch_to.window(first)
        self.page("verify-form", language, "verifyEmail.title", email=email)
        self.submit()
        self.page("verify-done", language, "verifyEmail.done.title")
        check(self.server.lookup(email)["emailVerified"] is True, f"[{language}] verify: the address is verified")
        self.flow.switch_to.window(second)
        self.submit()
        self.page("error-used-form", language, "error.used.title")
        self.flow.close()
        self.flow.switch_to.window(first)

    def change_and_recover(self, language):
        check = self.failures.check
        email, new_email = f"change-{language}-{RUN}@example.com", f"changed-{language}-{RUN}@example.com"
        self.server.create_account(email, verified=True)
        link = self.server.link("VERIFY_AND_CHANGE_EMAIL", email, language, newEmail=new_email)
        self.open(link)
        self.page("change-form", language, "verifyAndChangeEmail.title", newEmail=new_email, appName="Example App")
        self.submit()
        self.page("change-done", language, "verifyAndChangeEmail.done.title")
        check(self.server.lookup(new_email) is not None and self.server.lookup(email) is None, f"[{language}] change: the address moved")
        recovery = [item for item in self.server.listed_links() if item["requestType"] == "RECOVER_EMAIL" and item["email"] == email]
        if not check(len(recovery) == 1, f"[{language}] change: a recoverEmail link went to the old address"):
            return
        self.open(recovery[0]["oobLink"])
        check(f"lang={language}" in self.flow.current_url, f"[{language}] recover: the link keeps the language")
        self.page("recover-form", language, "recoverEmail.title")
        self.submit()
        self.page("recover-done", language, "recoverEmail.done.title")
        check(self.server.lookup(email) is not None, f"[{language}] recover: the old address is back")

    def revert_second_factor(self, language):
        """An authenticator app enrolled as the app's users do it (the REST calls the SDKs make), then
        removed from the notice's link: the page names the factor and changes nothing; its button
        removes the factor and signs every device out."""
        check = self.failures.check
        email, password = f"factor-{language}-{RUN}@example.com", "factor-password-1"
        self.server.create_account(email, password=password, verified=True)
        signed_in = self.server.client_call("/v1/accounts:signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})
        start = self.server.client_call("/v2/accounts/mfaEnrollment:start", {"idToken": signed_in["idToken"], "totpEnrollmentInfo": {}})
        info = start["totpSessionInfo"]
        step = int(time.time()) // info["periodSec"]
        finalize = self.server.client_call(
            "/v2/accounts/mfaEnrollment:finalize",
            {"idToken": signed_in["idToken"], "displayName": "Phone",
             "totpVerificationInfo": {"sessionInfo": info["sessionInfo"], "verificationCode": totp(info["sharedSecretKey"], step)}},
            {"X-Firebase-Locale": language})
        if not check("idToken" in finalize, f"[{language}] revert: enrolment finished: {finalize}"):
            return
        notices = [item for item in self.server.listed_links()
                   if item["requestType"] == "REVERT_SECOND_FACTOR_ADDITION" and item["email"] == email]
        if not check(len(notices) == 1, f"[{language}] revert: enrolment mailed one notice: {notices}"):
            return
        self.open(notices[0]["oobLink"])
        check(f"lang={language}" in self.flow.current_url, f"[{language}] revert: the link has the enrolment's language")
        self.page("revert-form", language, "revertSecondFactorAddition.title")
        intro = plain(self.flow.find_element(By.CSS_SELECTOR, "main p").text)
        check("Phone" in intro and email in intro, f"[{language}] revert: the page names the factor and the account: {intro!r}")
        check(len(self.server.lookup(email).get("mfaInfo") or []) == 1, f"[{language}] revert: opening the link removed nothing")
        self.submit()
        self.page("revert-done", language, "revertSecondFactorAddition.done.title")
        check(not self.server.lookup(email).get("mfaInfo"), f"[{language}] revert: the factor is gone")
        refreshed = self.server.client_call("/v1/token", {"grant_type": "refresh_token", "refresh_token": finalize["refreshToken"]})
        check(refreshed.get("status") == 400 and "TOKEN_EXPIRED" in json.dumps(refreshed),
              f"[{language}] revert: the enrolled session is signed out: {refreshed}")
        again = self.server.client_call("/v1/accounts:signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})
        check("idToken" in again and "mfaPendingCredential" not in again, f"[{language}] revert: the password alone signs in again: {again}")

    def error_pages(self, language):
        check = self.failures.check
        # Expired: the second server gives verification links one second.
        email = f"expired-{language}-{RUN}@example.com"
        self.expiring.create_account(email)
        link = self.expiring.link("VERIFY_EMAIL", email, language)
        time.sleep(1.3)
        self.open(link)
        self.page("error-expired", language, "error.expired.title")
        body = plain(self.flow.find_element(By.CSS_SELECTOR, "main p").text)
        check(body == plain(text(language, "error.expired.body", appName="Example App")), f"[{language}] expired: says what to do: {body!r}")
        # Invalid: a code nobody issued; no lang in the link, so Accept-Language decides.
        set_browser(self.flow, accept_language=f"{language}-XX,{language};q=0.9,en;q=0.5" if language != "en" else "fr-FR,en;q=0.5")
        self.open(self.server.origin + "/__/auth/action?mode=verifyEmail&oobCode=" + "A" * 43 + "&apiKey=demo-api-key")
        self.page("error-invalid", language, "error.invalid.title")
        set_browser(self.flow)

    def mobile_links(self, language):
        check = self.failures.check
        email = f"mobile-{language}-{RUN}@example.com"
        self.server.create_account(email)
        settings = {"canHandleCodeInApp": True, "iOSBundleId": "com.example.app", "androidPackageName": "com.example.app"}
        link = self.server.link("VERIFY_EMAIL", email, language, **settings)
        check("/__/auth/links?link=" in link, f"[{language}] links: a mobile link")
        self.open(link)
        self.page("links", language, "links.title", appName="Example App")
        banner = self.flow.find_elements(By.CSS_SELECTOR, "meta[name=apple-itunes-app]")
        content = banner[0].get_attribute("content") if banner else ""
        check(content.startswith("app-id=1234567890, app-argument=" + self.server.origin + "/__/auth/action?"),
              f"[{language}] links: Smart App Banner with app-argument: {content!r}")
        hrefs = [a.get_attribute("href") for a in self.flow.find_elements(By.CSS_SELECTOR, "main a")]
        check("https://apps.apple.com/app/id1234567890" in hrefs and "https://play.google.com/store/apps/details?id=com.example.app" in hrefs,
              f"[{language}] links: store links {hrefs}")
        # iPhone: "Open in the app" through the app's custom scheme.
        set_browser(self.flow, user_agent=IPHONE)
        self.open(link)
        self.page("links-ios", language, "links.title", appName="Example App")
        app = self.continue_href() or ""
        check(app.startswith("com.example.app://google/link/?deep_link_id="), f"[{language}] links on iOS: open in the app: {app!r}")
        # Android: an intent with the Play Store as fallback.
        set_browser(self.flow, user_agent=ANDROID)
        self.open(link)
        self.page("links-android", language, "links.title", appName="Example App")
        app = self.continue_href() or ""
        check(app.startswith("intent://") and "package=com.example.app" in app, f"[{language}] links on Android: intent: {app!r}")
        set_browser(self.flow)
        # Continue in the browser, then verify.
        self.open(link)
        self.click(self.flow.find_element(By.CSS_SELECTOR, f"main a[href^='{self.server.origin}/__/auth/action?']"))
        self.page("links-continued", language, "verifyEmail.title", email=email)
        self.submit()
        self.page("links-done", language, "verifyEmail.done.title")

    def minimum_version(self, language):
        check = self.failures.check
        email = f"minimum-{language}-{RUN}@example.com"
        self.server.create_account(email)
        link = self.server.link("VERIFY_EMAIL", email, language, canHandleCodeInApp=True, androidPackageName="com.example.app",
                                androidMinimumVersion="42")
        set_browser(self.flow, user_agent=ANDROID)
        self.open(link)
        self.page("minimum-version", language, "minimumVersion.title", appName="Example App")
        intro = plain(self.flow.find_element(By.CSS_SELECTOR, "main p").text)
        check(intro == plain(text(language, "minimumVersion.intro", version=42, appName="Example App")), f"[{language}] minimum version: {intro!r}")
        check(self.continue_href() == "https://play.google.com/store/apps/details?id=com.example.app", f"[{language}] minimum version: update link")
        set_browser(self.flow)

    def javascript_is_off(self):
        self.flow.get("data:text/html,<title>off</title><script>document.title='on'</script>")
        return self.failures.check(self.flow.title == "off", "JavaScript is off in the flow browser")

    def run(self):
        if not self.javascript_is_off():
            return
        flows = [self.sign_in, self.reset_password, self.reset_password_policy, self.verify_email, self.change_and_recover,
                 self.revert_second_factor, self.error_pages, self.mobile_links, self.minimum_version]
        for language in LANGUAGES:
            for flow in flows:
                started = time.time()
                try:
                    flow(language)
                except Exception:
                    self.failures.check(False, f"[{language}] {flow.__name__} stopped:\n{traceback.format_exc()}")
                    try:
                        set_browser(self.flow)
                    except Exception:
                        pass
                print(f"[{language}] {flow.__name__}: {time.time() - started:.1f}s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--origin", required=True, help="the server, also its link domain (http://localhost:PORT)")
    parser.add_argument("--expiring-origin", required=True, help="a server whose verifyEmail links last one second")
    parser.add_argument("--policy-origin", help="a server enforcing a password policy (10 characters, an upper-case letter, a digit)")
    parser.add_argument("--screenshots", default=os.path.join(ROOT, ".build", "browser-screenshots"))
    arguments = parser.parse_args()
    pages = Pages(arguments)
    try:
        pages.run()
    finally:
        pages.close()
    failures = pages.failures
    print(f"{pages.pages_seen} pages, {pages.audited} axe runs, screenshots in {arguments.screenshots}")
    print(f"{failures.checks - len(failures.items)} passed, {len(failures.items)} failed")
    if failures.items:
        print("\nFailures:\n" + "\n".join(failures.items))
    return 1 if failures.items else 0


if __name__ == "__main__":
    sys.exit(main())
