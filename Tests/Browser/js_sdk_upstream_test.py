#!/usr/bin/env python3
"""The real Firebase JS SDK (Tests/Clients) in headless Chromium with ActionLinks in upstream
mode: the SDK's project is the upstream (an ActionLinks production server as strict as Google, with
its restricted keys and authorized domains, reached with `useEmulator` for its address; the app
uses its unrestricted key, `--api-key`), and the front (production, upstream mode) is the link
domain. Both servers mail through the webhook this script runs.

1. The app asks the front's sendOobCode for a sign-in link (a fetch, as an app or backend would);
   the link the front mailed (to a webhook this script runs) is opened in the browser, the front
   answers 303 to the app's page, and the SDK's isSignInWithEmailLink and signInWithEmailLink
   complete with the upstream. A second link's mail carries a sign-in code, which a second browser
   context (sharing nothing with the first) exchanges at the front (signInCodes:exchange); its
   signInWithEmailLink completes with the upstream as the same user, and the code works once.
2. A password account made through the SDK asks for a reset (sendPasswordResetEmail, to the
   upstream, whose link domain is the front's: Firebase's "action URL" set to the front); the link
   is completed on the front's page by typing, then signInWithEmailAndPassword works with the new
   password through the SDK.

Run by Tests/ActionLinksServerTests/Upstream/UpstreamBrowserTests.swift:
    python3 Tests/Browser/js_sdk_upstream_test.py --upstream URL --front URL --sdk DIR --app-port N --mail-port N --api-key K
Exit status 0 when every check passed; otherwise 1, with the failures listed; 3 when Selenium is missing.
"""

import argparse
import http.server
import json
import os
import re
import socketserver
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from js_sdk_test import RUN, Failures, call, make_driver, serve_app, sign_in_code  # noqa: E402

from selenium.webdriver.common.by import By  # noqa: E402


def serve(port, handler):
    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def serve_mailbox(port):
    """The front's mail webhook: keeps every message."""
    messages = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            messages.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

    serve(port, Handler)
    return messages


def wait_for(condition, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    return None


def run(driver, front, app, messages, api_key, failures):
    email = f"upstream-web-{RUN}@example.com"
    driver.get(app + "/")
    asked = call(driver, f"""
        const reply = await fetch("{front}/v1/accounts:sendOobCode?key={api_key}", {{
            method: "POST", headers: {{"Content-Type": "application/json"}},
            body: JSON.stringify({{requestType: "EMAIL_SIGNIN", email: "{email}", continueUrl: "{app}/finish"}})}});
        return {{status: reply.status, body: await reply.json()}};""")
    failures.check(asked["ok"] and asked["value"]["status"] == 200, f"sendOobCode on the front: {asked}")

    def mailed_link():
        for message in messages:
            if message.get("to") == email:
                found = re.search(re.escape(front) + r"/__/auth/action\?[^\s\"<>]+", message.get("text", ""))
                if found:
                    return found.group(0)
        return None

    link = wait_for(mailed_link)
    failures.check(link is not None, f"the front mailed the sign-in link to {email}: {messages}")
    if link is None:
        return
    driver.get(link)
    failures.check(driver.current_url.startswith(app + "/finish?"), f"the link went on to the app's page: {driver.current_url}")
    is_link = call(driver, "return auth.isSignInWithEmailLink(location.href);")
    failures.check(is_link == {"ok": True, "value": True}, f"isSignInWithEmailLink: {is_link}")
    signed_in = call(driver, f"const c = await auth.signInWithEmailLink('{email}', location.href); return userInfo(c.user);")
    failures.check(signed_in["ok"] and signed_in["value"]["email"] == email and signed_in["value"]["emailVerified"],
                   f"signInWithEmailLink with the upstream: {signed_in}")

    if signed_in["ok"]:
        sign_in_on_another_device(driver, front, app, messages, api_key, email, signed_in["value"]["uid"], failures)

    # A reset mailed by the upstream, whose action URL is the front, completed on the front's page.
    reader = f"reader-{RUN}@example.com"
    driver.get(app + "/")
    made = call(driver, f"await auth.signOut(); const c = await auth.createUserWithEmailAndPassword('{reader}', 'first-pass-1');"
                        f" await auth.sendPasswordResetEmail('{reader}'); return c.user.uid;")
    failures.check(made["ok"], f"createUserWithEmailAndPassword and sendPasswordResetEmail: {made}")

    def mailed_reset():
        for message in messages:
            if message.get("to") == reader:
                found = re.search(r"https?://[^\s\"<>]+/__/auth/action\?[^\s\"<>]*mode=resetPassword[^\s\"<>]*", message.get("text", ""))
                if found:
                    return found.group(0)
        return None

    reset = wait_for(mailed_reset)
    failures.check(reset is not None and reset.startswith(front + "/__/auth/action?"), f"the upstream mailed a link on the front: {reset}")
    if reset is None:
        return
    driver.get(reset)
    driver.find_element(By.NAME, "password").send_keys("new-pass-2")
    driver.find_element(By.NAME, "passwordAgain").send_keys("new-pass-2")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    done = wait_for(lambda: "Your password has been changed" in driver.page_source, 60)
    failures.check(done, f"the front's done page: {driver.page_source[:600]}")
    driver.get(app + "/")
    again = call(driver, f"const c = await auth.signInWithEmailAndPassword('{reader}', 'new-pass-2'); return userInfo(c.user);")
    failures.check(again["ok"] and again["value"]["email"] == reader, f"signInWithEmailAndPassword with the new password: {again}")
    old = call(driver, f"await auth.signOut(); await auth.signInWithEmailAndPassword('{reader}', 'first-pass-1'); return 1;")
    failures.check(not old["ok"], f"the old password no longer works: {old}")


def sign_in_on_another_device(driver, front, app, messages, api_key, email, uid, failures):
    """The front's sign-in mail carries a code; a second browser context, sharing nothing with the
    first, exchanges it at the front and signs in with the upstream as the same user."""
    driver.get(app + "/")
    seen = len([m for m in messages if m.get("to") == email])
    asked = call(driver, f"""
        await auth.signOut();
        const reply = await fetch("{front}/v1/accounts:sendOobCode?key={api_key}", {{
            method: "POST", headers: {{"Content-Type": "application/json"}},
            body: JSON.stringify({{requestType: "EMAIL_SIGNIN", email: "{email}", continueUrl: "{app}/finish"}})}});
        return reply.status;""")
    failures.check(asked == {"ok": True, "value": 200}, f"a second sign-in link asked of the front: {asked}")
    mails = wait_for(lambda: [m for m in messages if m.get("to") == email][seen:])
    code = sign_in_code(mails[0]) if mails else None
    failures.check(code is not None and len(code) == 7, f"the front's mail carries the code, grouped: {mails}")
    if code is None:
        return
    other = make_driver()
    try:
        other.get(app + "/")
        exchange = f"""
            const response = await fetch("{front}/v1/signInCodes:exchange?key={api_key}", {{
                method: "POST", headers: {{"Content-Type": "application/json"}},
                body: JSON.stringify({{email: "{email}", code: {json.dumps(code)}}})}});
            const answer = await response.json();
            if (!response.ok) throw {{code: answer.error.message.split(" : ")[0]}};"""
        result = call(other, exchange + """
            const before = auth.currentUser && auth.currentUser.uid;
            const credential = await auth.signInWithEmailLink(answer.email, answer.emailLink);
            return {before, link: answer.emailLink, user: userInfo(credential.user)};""")
        failures.check(result["ok"] and result["value"]["before"] is None, f"the other context starts signed out: {result}")
        failures.check(result["ok"] and result["value"]["link"] in mails[0]["text"], f"the exchange gives the link as mailed: {result}")
        failures.check(result["ok"] and result["value"]["user"]["uid"] == uid,
                       f"signInWithEmailLink with the upstream, in the other context, signs in the same user: {result}")
        again = call(other, exchange + " return answer;")
        failures.check(not again["ok"] and again.get("code") == "INVALID_SIGN_IN_CODE", f"the code works once: {again}")
    finally:
        other.quit()


def main():
    parser = argparse.ArgumentParser()
    for name in ["--upstream", "--front", "--sdk"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--app-port", type=int, required=True)
    parser.add_argument("--mail-port", type=int, required=True)
    parser.add_argument("--api-key", required=True)
    args = parser.parse_args()
    upstream, front = args.upstream.rstrip("/"), args.front.rstrip("/")
    serve_app(args.sdk, upstream, port=args.app_port, api_key=args.api_key)
    messages = serve_mailbox(args.mail_port)
    app = f"http://127.0.0.1:{args.app_port}"
    failures = Failures()
    driver = make_driver()
    try:
        run(driver, front, app, messages, args.api_key, failures)
    except Exception:
        failures.items.append("stopped: " + traceback.format_exc())
    finally:
        driver.quit()
    print(f"{failures.checks} checks, {len(failures.items)} failed")
    for item in failures.items:
        print("FAIL: " + item)
    sys.exit(1 if failures.items else 0)


if __name__ == "__main__":
    main()
