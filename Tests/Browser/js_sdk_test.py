#!/usr/bin/env python3
"""The real Firebase JS SDK (11.0.2, Tests/Clients) in headless Chromium against a running
development server, from a web app on an origin of its own, as a Firebase web app uses it after
`auth.useEmulator(<server>)`: email-link sign-in (in the app, on the web after the link was
opened in the browser and followed to the app's page, and on another device with the sign-in code
from the mail, exchanged in a second browser context), password accounts, anonymous upgrade,
token refresh, profile, verification, password reset, action-code checks, custom tokens and
deletion. Every step is a call of the SDK's own API; the links come from the server's emulator
listing, as a test suite written for Firebase's emulator reads them, and the sign-in code from the
mail itself, which the server POSTs to a webhook this script listens on (--mail-port).

With --policy-server, also the project's password policy as the SDK reads it (`validatePassword`)
against a second server that enforces one, and `createUserWithEmailAndPassword` refused by it.

Run by Tests/ActionLinksServerTests/EndToEnd/BrowserTests.swift:
    python3 Tests/Browser/js_sdk_test.py --server http://localhost:PORT --sdk Tests/Clients/firebase-js-sdk-11.0.2 \\
        --mail-port MAILPORT [--policy-server http://localhost:PORT2]
    (the server's mail.webhookUrl is http://127.0.0.1:MAILPORT/mail)
Exit status 0 when every check passed; otherwise 1, with the failures listed.
"""

import argparse
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import traceback
import urllib.parse
import urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError as error:
    print(f"MISSING-DEPENDENCY: {error}; pip install -r Tests/Browser/requirements.txt", file=sys.stderr)
    sys.exit(3)

PROJECT = "demo-actionlinks"
API_KEY = "demo-api-key"
RUN = str(int(time.time() * 1000) % 100000000)

# The web app: the SDK, and a helper that runs one step and reports its result or its error code.
APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>app</title>
<script>
  // The SDK gives each request 30 s, a client-side guess about networks and not what is tested
  // here; a CI machine whose disk is busy with a parallel build has taken longer. Its requests get
  // the driver's hang guard instead (a wrong answer still fails; the time taken is reported).
  const realSetTimeout = window.setTimeout.bind(window);
  window.setTimeout = (handler, ms, ...rest) => realSetTimeout(handler, ms === 30000 ? 240000 : ms, ...rest);
</script>
<script src="/firebase-app-compat.js"></script>
<script src="/firebase-auth-compat.js"></script>
<script>
  firebase.initializeApp({apiKey: "%(apiKey)s", authDomain: "%(authDomain)s", projectId: "%(project)s"});
  const auth = firebase.auth();
  auth.useEmulator("%(server)s", {disableWarnings: true});
  window.run = async (step) => {
    const started = performance.now();
    try { return {ok: true, value: await step()}; }
    catch (error) {
      return {ok: false, code: error.code || String(error), message: String(error.message || error),
              seconds: Math.round(performance.now() - started) / 1000};
    }
  };
  window.userInfo = (user) => user && {uid: user.uid, email: user.email, emailVerified: user.emailVerified,
    isAnonymous: user.isAnonymous, displayName: user.displayName, photoURL: user.photoURL,
    providers: user.providerData.map(p => p.providerId)};
</script></head><body><p id="ready">ready</p></body></html>
"""


class Failures:
    def __init__(self):
        self.items = []
        self.checks = 0

    def check(self, condition, message):
        self.checks += 1
        if not condition:
            self.items.append(message)


def serve_app(sdk, server, port=0, api_key=API_KEY):
    """Serves the SDK and the app page (its project's server `server`, its key `api_key`) on loopback
    `port` (0: a free one); returns the origin."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            path = urllib.parse.urlparse(self.path).path
            if path.endswith(".js"):
                with open(os.path.join(sdk, os.path.basename(path)), "rb") as handle:
                    body = handle.read()
                content_type = "text/javascript"
            else:
                body = (APP_PAGE % {"apiKey": api_key, "authDomain": urllib.parse.urlparse(server).netloc, "project": PROJECT,
                                    "server": server}).encode()
                content_type = "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


class MailReceiver:
    """The server's webhook mail backend's receiver: every message it POSTs, as JSON."""

    def __init__(self, port):
        self.messages = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.messages.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        httpd = socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()

    def count(self, to):
        with self.lock:
            return len([m for m in self.messages if m["to"] == to])

    def next(self, to, seen):
        """The first message to `to` after the `seen` ones before it (waits for it: delivery is in the background)."""
        deadline = time.time() + 120
        while time.time() < deadline:
            with self.lock:
                sent = [m for m in self.messages if m["to"] == to]
            if len(sent) > seen:
                return sent[seen]
            time.sleep(0.05)
        raise RuntimeError(f"no mail to {to}")


def sign_in_code(message):
    """The sign-in code in a mail's text: the line of digit groups (bidi isolates dropped)."""
    for line in message["text"].split("\n"):
        visible = line.replace("\u2066", "").replace("\u2069", "").strip()
        if len(visible) >= 6 and all(c.isdigit() or c == " " for c in visible):
            return visible
    return None


def make_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
    # Hang guards, not bounds: a loaded machine (a parallel build) makes pages slow, never wrong.
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(300)
    return driver


def call(driver, body):
    """Runs `body` (JavaScript, an async arrow's body) in the app page through window.run."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; window.run(async () => {" + body + "}).then(done);")


def listing(server):
    with urllib.request.urlopen(f"{server}/emulator/v1/projects/{PROJECT}/oobCodes") as response:
        return json.loads(response.read())["oobCodes"]


def last_code(server, email, request_type):
    codes = [c for c in listing(server) if c["email"] == email and c["requestType"] == request_type]
    return codes[-1] if codes else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--sdk", required=True)
    parser.add_argument("--mail-port", type=int, required=True)
    parser.add_argument("--policy-server", help="a server enforcing POLICY (see run_password_policy)")
    args = parser.parse_args()
    server = args.server.rstrip("/")
    app = serve_app(args.sdk, server)
    mail = MailReceiver(args.mail_port)
    failures = Failures()
    driver = make_driver()
    try:
        run(driver, server, app, mail, failures)
        if args.policy_server:
            run_password_policy(driver, args.policy_server.rstrip("/"), serve_app(args.sdk, args.policy_server.rstrip("/")), failures)
    except Exception:
        failures.items.append("stopped: " + traceback.format_exc())
    finally:
        driver.quit()
    print(f"{failures.checks} checks, {len(failures.items)} failed")
    for item in failures.items:
        print("FAIL: " + item)
    sys.exit(1 if failures.items else 0)


def open_app(driver, app, path="/app.html"):
    driver.get(app + path)
    deadline = time.time() + 60
    while time.time() < deadline:
        if driver.execute_script("return typeof window.run === 'function' && typeof firebase !== 'undefined'"):
            return
        time.sleep(0.05)
    raise RuntimeError("the app page did not load the SDK")


def run(driver, server, app, mail, failures):
    open_app(driver, app)

    # Email-link sign-in in the app: the link is handed to the SDK as the app would receive it.
    email = f"link-{RUN}@example.com"
    result = call(driver, f"""
        await auth.sendSignInLinkToEmail("{email}", {{url: "{app}/finish.html", handleCodeInApp: true}});
        return true;""")
    failures.check(result["ok"], f"sendSignInLinkToEmail: {result}")
    code = last_code(server, email, "EMAIL_SIGNIN")
    failures.check(code is not None, "the sign-in link is listed")
    link = code["oobLink"]
    result = call(driver, f"""
        const link = {json.dumps(link)};
        if (!auth.isSignInWithEmailLink(link)) throw new Error("not a sign-in link");
        const credential = await auth.signInWithEmailLink("{email}", link);
        return {{user: userInfo(credential.user), isNew: credential.additionalUserInfo.isNewUser}};""")
    failures.check(result["ok"] and result["value"]["user"]["email"] == email and result["value"]["isNew"],
                   f"signInWithEmailLink in the app: {result}")
    failures.check(result["ok"] and result["value"]["user"]["emailVerified"], "an email-link user is verified")
    first_uid = result["value"]["user"]["uid"] if result["ok"] else None

    # Email-link sign-in on the web: the browser opens the link; the server sends it on to the app's
    # page with the code, where the SDK completes it from location.href.
    call(driver, "await auth.signOut(); return true;")
    result = call(driver, f"""
        await auth.sendSignInLinkToEmail("{email}", {{url: "{app}/finish.html", handleCodeInApp: true}});
        return true;""")
    link = last_code(server, email, "EMAIL_SIGNIN")["oobLink"]
    driver.get(link)
    landed = driver.current_url
    failures.check(landed.startswith(app + "/finish.html?"), f"the link's GET went on to the app's page: {landed}")
    for parameter in ["apiKey=", "oobCode=", "mode=signIn", "lang="]:
        failures.check(parameter in landed, f"the app's page got {parameter}: {landed}")
    open_until_ready(driver)
    result = call(driver, f"""
        if (!auth.isSignInWithEmailLink(location.href)) throw new Error("not a sign-in link: " + location.href);
        const credential = await auth.signInWithEmailLink("{email}", location.href);
        return userInfo(credential.user);""")
    failures.check(result["ok"] and result["value"]["uid"] == first_uid, f"signInWithEmailLink on the web: {result}")
    result = call(driver, f"""
        try {{ await auth.signInWithEmailLink("{email}", location.href); return "no error"; }}
        catch (error) {{ return error.code; }}""")
    failures.check(result["ok"] and result["value"] == "auth/invalid-action-code", f"a used link is refused: {result}")

    # Signing in on another device (docs/SIGN-IN-CODES.md): this page asks for a
    # link, the person reads the code in the mail and types it into the app in a second browser
    # context (another device: nothing shared), which exchanges it for the link and signs in there.
    sign_in_on_another_device(driver, server, app, mail, email, first_uid, failures)

    # Password accounts.
    open_app(driver, app)
    password_email = f"password-{RUN}@example.com"
    result = call(driver, f"""
        const credential = await auth.createUserWithEmailAndPassword("{password_email}", "first-password-1");
        return userInfo(credential.user);""")
    failures.check(result["ok"] and result["value"]["email"] == password_email, f"createUserWithEmailAndPassword: {result}")
    result = call(driver, f"""
        await auth.signOut();
        const credential = await auth.signInWithEmailAndPassword("{password_email.upper()}", "first-password-1");
        return userInfo(credential.user);""")
    failures.check(result["ok"] and result["value"]["providers"] == ["password"], f"signInWithEmailAndPassword: {result}")
    result = call(driver, f"""
        try {{ await auth.signInWithEmailAndPassword("{password_email}", "wrong-password"); return "no error"; }}
        catch (error) {{ return error.code; }}""")
    failures.check(result["ok"] and result["value"] in ("auth/wrong-password", "auth/invalid-credential"),
                   f"a wrong password is refused: {result}")

    # Token refresh, profile, reload.
    result = call(driver, """
        const before = await auth.currentUser.getIdToken();
        await new Promise(resolve => setTimeout(resolve, 1100));
        const after = await auth.currentUser.getIdToken(true);
        const claims = JSON.parse(atob(after.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
        return {changed: before !== after, provider: claims.firebase.sign_in_provider, iss: claims.iss};""")
    failures.check(result["ok"] and result["value"]["changed"] and result["value"]["provider"] == "password",
                   f"getIdToken(true) refreshes: {result}")
    result = call(driver, """
        await auth.currentUser.updateProfile({displayName: "Ann", photoURL: "https://example.com/ann.png"});
        await auth.currentUser.reload();
        return userInfo(auth.currentUser);""")
    failures.check(result["ok"] and result["value"]["displayName"] == "Ann" and result["value"]["photoURL"] == "https://example.com/ann.png",
                   f"updateProfile then reload: {result}")
    result = call(driver, """
        await auth.currentUser.updateProfile({displayName: null});
        await auth.currentUser.reload();
        return userInfo(auth.currentUser);""")
    failures.check(result["ok"] and result["value"]["displayName"] is None, f"updateProfile with null deletes the name: {result}")

    # Email verification: the SDK asks for the mail, the app applies the code it carries.
    result = call(driver, "await auth.currentUser.sendEmailVerification(); return true;")
    failures.check(result["ok"], f"sendEmailVerification: {result}")
    code = last_code(server, password_email, "VERIFY_EMAIL")
    failures.check(code is not None, "the verification link is listed")
    result = call(driver, f"""
        const info = await auth.checkActionCode("{code['oobCode']}");
        await auth.applyActionCode("{code['oobCode']}");
        await auth.currentUser.reload();
        return {{operation: info.operation, email: info.data.email, verified: auth.currentUser.emailVerified}};""")
    failures.check(result["ok"] and result["value"] == {"operation": "VERIFY_EMAIL", "email": password_email, "verified": True},
                   f"checkActionCode and applyActionCode: {result}")

    # Password reset.
    result = call(driver, f"""await auth.sendPasswordResetEmail("{password_email}"); return true;""")
    failures.check(result["ok"], f"sendPasswordResetEmail: {result}")
    code = last_code(server, password_email, "PASSWORD_RESET")
    failures.check(code is not None, "the reset link is listed")
    result = call(driver, f"""
        const email = await auth.verifyPasswordResetCode("{code['oobCode']}");
        await auth.confirmPasswordReset("{code['oobCode']}", "second-password-2");
        await auth.signOut();
        const credential = await auth.signInWithEmailAndPassword("{password_email}", "second-password-2");
        return {{email, uid: credential.user.uid}};""")
    failures.check(result["ok"] and result["value"]["email"] == password_email, f"the reset flow: {result}")

    # Anonymous sign-in, then an upgrade with an email credential.
    anonymous_email = f"anon-{RUN}@example.com"
    result = call(driver, f"""
        await auth.signOut();
        const anonymous = await auth.signInAnonymously();
        const uid = anonymous.user.uid;
        const isAnonymous = anonymous.user.isAnonymous;
        const credential = firebase.auth.EmailAuthProvider.credential("{anonymous_email}", "anon-password-1");
        const linked = await auth.currentUser.linkWithCredential(credential);
        return {{uid, isAnonymous, linkedUid: linked.user.uid, email: linked.user.email, stillAnonymous: linked.user.isAnonymous}};""")
    failures.check(result["ok"] and result["value"]["isAnonymous"] and result["value"]["linkedUid"] == result["value"]["uid"]
                   and result["value"]["email"] == anonymous_email and not result["value"]["stillAnonymous"],
                   f"signInAnonymously then linkWithCredential: {result}")

    # A custom token (a development server takes the emulator's unsigned ones).
    result = call(driver, f"""
        await auth.signOut();
        const credential = await auth.signInWithCustomToken(JSON.stringify({{uid: "custom-{RUN}", claims: {{plan: "gold"}}}}));
        const token = await credential.user.getIdTokenResult();
        return {{uid: credential.user.uid, plan: token.claims.plan, provider: token.signInProvider}};""")
    failures.check(result["ok"] and result["value"] == {"uid": f"custom-{RUN}", "plan": "gold", "provider": "custom"},
                   f"signInWithCustomToken: {result}")

    # Deletion.
    result = call(driver, f"""
        await auth.signOut();
        await auth.signInWithEmailAndPassword("{password_email}", "second-password-2");
        await auth.currentUser.delete();
        try {{ await auth.signInWithEmailAndPassword("{password_email}", "second-password-2"); return "no error"; }}
        catch (error) {{ return error.code; }}""")
    failures.check(result["ok"] and result["value"] in ("auth/user-not-found", "auth/invalid-credential"),
                   f"user.delete(): {result}")


def run_password_policy(driver, server, app, failures):
    """validatePassword against the policy the server serves (--policy-server: 10 to 30 characters,
    an upper-case letter, a digit and one of Firebase's symbols, enforced), and the server's own
    refusal of what the SDK reports missing."""
    open_app(driver, app)
    fields = ["isValid", "meetsMinPasswordLength", "meetsMaxPasswordLength", "containsLowercaseLetter", "containsUppercaseLetter",
              "containsNumericCharacter", "containsNonAlphanumericCharacter"]
    def validate(password):
        return call(driver, f"""
            const status = await auth._delegate.validatePassword({json.dumps(password)});
            const policy = status.passwordPolicy;
            return {{status: Object.fromEntries({json.dumps(fields)}.map(name => [name, status[name] ?? null])),
                     policy: {{options: policy.customStrengthOptions, enforcement: policy.enforcementState,
                              symbols: policy.allowedNonAlphanumericCharacters}}}};""")
    weak = validate("lowercase")
    failures.check(weak["ok"], f"validatePassword: {weak}")
    if not weak["ok"]:
        return
    failures.check(weak["value"]["policy"]["enforcement"] == "ENFORCE" and weak["value"]["policy"]["options"] == {
        "minPasswordLength": 10, "maxPasswordLength": 30, "containsUppercaseLetter": True, "containsNumericCharacter": True,
        "containsNonAlphanumericCharacter": True}, f"the policy the SDK read: {weak['value']['policy']}")
    failures.check(weak["value"]["status"] == {
        "isValid": False, "meetsMinPasswordLength": False, "meetsMaxPasswordLength": True, "containsLowercaseLetter": None,
        "containsUppercaseLetter": False, "containsNumericCharacter": False, "containsNonAlphanumericCharacter": False},
        f"validatePassword of a weak password reports what is missing: {weak['value']['status']}")
    good = validate("Compliant_pass1")
    failures.check(good["ok"] and good["value"]["status"]["isValid"] is True, f"validatePassword of a compliant password: {good}")
    dash = validate("Compliant-pass1")
    failures.check(dash["ok"] and dash["value"]["status"]["containsNonAlphanumericCharacter"] is False,
                   f"'-' is not one of Firebase's symbols, for the SDK either: {dash}")

    # The server refuses what the SDK reports missing, with the SDK's code and Google's list.
    email = f"policy-{RUN}@example.com"
    result = call(driver, f"""
        try {{ await auth.createUserWithEmailAndPassword("{email}", "Compliant-pass1"); return "no error"; }}
        catch (error) {{ return {{code: error.code, message: error.message}}; }}""")
    failures.check(result["ok"] and result["value"]["code"] == "auth/password-does-not-meet-requirements"
                   and "Missing password requirements: [Password must contain a non-alphanumeric character]" in result["value"]["message"],
                   f"createUserWithEmailAndPassword with a password the policy refuses: {result}")
    result = call(driver, f"""
        try {{ await auth.createUserWithEmailAndPassword("{email}", "lowercase"); return "no error"; }}
        catch (error) {{ return {{code: error.code, message: error.message}}; }}""")
    failures.check(result["ok"] and result["value"]["code"] == "auth/password-does-not-meet-requirements"
                   and "[Password must contain at least 10 characters, Password must contain an upper case character, "
                   "Password must contain a numeric character, Password must contain a non-alphanumeric character]" in result["value"]["message"],
                   f"every missing rule, in Google's order: {result}")
    result = call(driver, f"""
        const credential = await auth.createUserWithEmailAndPassword("{email}", "Compliant_pass1");
        return userInfo(credential.user);""")
    failures.check(result["ok"] and result["value"]["email"] == email, f"a compliant password is taken: {result}")


def sign_in_on_another_device(driver, server, app, mail, email, uid, failures):
    open_app(driver, app)
    call(driver, "await auth.signOut(); return true;")
    seen = mail.count(email)
    result = call(driver, f"""
        await auth.sendSignInLinkToEmail("{email}", {{url: "{app}/finish.html", handleCodeInApp: true}});
        return true;""")
    failures.check(result["ok"], f"sendSignInLinkToEmail for another device: {result}")
    message = mail.next(email, seen)
    code = sign_in_code(message)
    failures.check(code is not None and len(code) == 7, f"the mail carries the code, grouped: {message['text']}")
    link = last_code(server, email, "EMAIL_SIGNIN")["oobLink"]
    failures.check(link in message["text"], "the mail carries the link")
    other = make_driver()
    try:
        open_app(other, app)
        exchange = f"""
            const response = await fetch("{server}/v1/signInCodes:exchange?key={API_KEY}", {{
                method: "POST", headers: {{"Content-Type": "application/json"}},
                body: JSON.stringify({{email: "{email}", code: {json.dumps(code)}}})}});
            const answer = await response.json();
            if (!response.ok) throw {{code: answer.error.message.split(" : ")[0]}};
            return answer;"""
        result = call(other, f"""
            const before = auth.currentUser && auth.currentUser.uid;
            {exchange.replace("return answer;", "")}
            if (!auth.isSignInWithEmailLink(answer.emailLink)) throw new Error("not a sign-in link: " + answer.emailLink);
            const credential = await auth.signInWithEmailLink(answer.email, answer.emailLink);
            return {{before, link: answer.emailLink, user: userInfo(credential.user)}};""")
        failures.check(result["ok"] and result["value"]["before"] is None, f"the other context starts signed out: {result}")
        failures.check(result["ok"] and result["value"]["link"] == link, f"the exchange gives the link exactly as mailed: {result}")
        failures.check(result["ok"] and result["value"]["user"]["uid"] == uid and result["value"]["user"]["email"] == email,
                       f"signInWithEmailLink in the other context signs in the same user: {result}")
        result = call(other, exchange)
        failures.check(not result["ok"] and result["code"] == "INVALID_SIGN_IN_CODE", f"the code works once: {result}")
        result = call(driver, "return auth.currentUser && auth.currentUser.uid;")
        failures.check(result["ok"] and result["value"] is None, f"the asking context is still signed out: {result}")
    finally:
        other.quit()


def open_until_ready(driver):
    deadline = time.time() + 60
    while time.time() < deadline:
        if driver.execute_script("return typeof window.run === 'function' && typeof firebase !== 'undefined'"):
            return
        time.sleep(0.05)
    raise RuntimeError("the app's page did not load the SDK: " + driver.current_url)


if __name__ == "__main__":
    main()
