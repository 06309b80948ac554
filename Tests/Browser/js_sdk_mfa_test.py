#!/usr/bin/env python3
"""TOTP second factors through Google's modular Firebase JS SDK 11.9.0 (Tests/Clients), the MFA code
production apps run, in headless Chromium against a running development server with TOTP enabled,
from a web app on an origin of its own after `connectAuthEmulator(auth, <server>)`:

- a password account, its address verified (the admin's VERIFY_EMAIL link, applied in the app),
  signed in again;
- enrolment: `multiFactor(user).getSession()`, `TotpMultiFactorGenerator.generateSecret`, the code
  an authenticator app shows (computed here, RFC 6238, from the secret the SDK was given),
  `assertionForEnrollment`, `enroll`; the factor in `enrolledFactors`; `generateQrCodeUrl`;
- sign-in: the password answers `auth/multi-factor-auth-required`; `getMultiFactorResolver` lists
  the factor; a wrong code and a code outside the window are `auth/invalid-verification-code`; the
  next step's code signs in, with `signInSecondFactor` "totp" in the token;
- a code is used once: a new sign-in cannot replay it, a later step's code signs in;
- an email link asks for the second factor too;
- `unenroll` of the session's own factor signs the app out (the server revokes every session), and
  the password then signs in without a second step.

The server's clock is real: every code is computed from this machine's clock at the moment it is
used, each at a step after the last one used (the server refuses a step already used), within the
window of ACTIONLINKS_MFA_TOTP_ADJACENT_INTERVALS (the default, 5).

Run by Tests/ActionLinksServerTests/EndToEnd/BrowserMFATests.swift:
    python3 Tests/Browser/js_sdk_mfa_test.py --server http://localhost:PORT --sdk Tests/Clients/firebase-js-sdk-11.9.0-modular
Exit status 0 when every check passed; 1, with the failures listed, otherwise; 3 when Selenium is missing.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import socketserver
import struct
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

# The 11.0.2 script's driver, its call helper and the emulator listing (it exits 3 without Selenium).
from js_sdk_test import API_KEY, PROJECT, RUN, call, last_code, make_driver

SDK_VERSION = "11.9.0"
APP_URL = f"https://www.gstatic.com/firebasejs/{SDK_VERSION}/firebase-app.js"

# The web app: the modular SDK (firebase-auth.js imports gstatic's firebase-app.js, mapped to the
# local file), every export of the auth module on window, and the step runner of js_sdk_test.py.
APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>app</title>
<script>
  // The SDK gives each request 30 s, a client-side guess about networks and not what is tested
  // here (see js_sdk_test.py): its requests get the driver's hang guard instead.
  const realSetTimeout = window.setTimeout.bind(window);
  window.setTimeout = (handler, ms, ...rest) => realSetTimeout(handler, ms === 30000 ? 240000 : ms, ...rest);
</script>
<script type="importmap">{"imports": {"%(appURL)s": "./firebase-app.js"}}</script>
<script type="module">
  import { initializeApp } from "%(appURL)s";
  import * as sdk from "./firebase-auth.js";
  const app = initializeApp({apiKey: "%(apiKey)s", authDomain: "%(authDomain)s", projectId: "%(project)s"});
  const auth = sdk.getAuth(app);
  sdk.connectAuthEmulator(auth, "%(server)s", {disableWarnings: true});
  for (const [name, value] of Object.entries(sdk)) if (!(name in window)) window[name] = value;
  window.auth = auth;
  window.userInfo = (user) => user && {uid: user.uid, email: user.email, emailVerified: user.emailVerified,
    factors: multiFactor(user).enrolledFactors.map(f => ({uid: f.uid, factorId: f.factorId, displayName: f.displayName,
                                                           enrollmentTime: f.enrollmentTime}))};
  window.errorOf = (error) => ({code: error.code || String(error), message: String(error.message || error)});
  window.run = async (step) => {
    const started = performance.now();
    try { return {ok: true, value: await step()}; }
    catch (error) { return {ok: false, ...errorOf(error), seconds: Math.round(performance.now() - started) / 1000}; }
  };
</script></head><body><p id="ready">ready</p></body></html>
"""


class Checks:
    def __init__(self):
        self.passed = 0
        self.failures = []

    def check(self, condition, message):
        if condition:
            self.passed += 1
        else:
            self.failures.append(message)
        return condition


# RFC 6238 TOTP, as an authenticator app computes it: HMAC-SHA-1, 6 digits, 30-second steps.

def totp(secret, step, digits=6):
    digest = hmac.new(secret, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10 ** digits).zfill(digits)


def step_now():
    return int(time.time()) // 30


def base32_secret(key):
    return base64.b32decode(key.upper() + "=" * (-len(key) % 8))


class Authenticator:
    """The user's authenticator app: the code of a step after every step already used, read from
    the real clock when asked."""

    def __init__(self, secret):
        self.secret = secret
        self.last = None

    def next(self):
        step = step_now() if self.last is None else max(step_now(), self.last + 1)
        self.last = step
        return totp(self.secret, step)

    def wrong(self):
        """A code of no step near now."""
        near = {totp(self.secret, step_now() + offset) for offset in range(-8, 9)}
        candidate = 123456
        while str(candidate).zfill(6) in near:
            candidate = (candidate + 1) % 10 ** 6
        return str(candidate).zfill(6)

    def far(self):
        """A valid code of a step far outside the window (20 steps, ten minutes, ahead)."""
        return totp(self.secret, step_now() + 20)


def check_generator(checks):
    """The generator against RFC 6238's SHA-1 vectors (their last 6 of 8 digits)."""
    secret = b"12345678901234567890"
    for seconds, expected in [(59, "287082"), (1111111109, "081804"), (1234567890, "005924"), (2000000000, "279037")]:
        checks.check(totp(secret, seconds // 30) == expected, f"RFC 6238 at t={seconds}: {totp(secret, seconds // 30)} != {expected}")
    checks.check(base32_secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ") == secret, "base32 of the RFC secret")


def serve_app(sdk, server):
    """Serves the SDK's two files and the app page on a free loopback port; returns the origin."""
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
                body = (APP_PAGE % {"apiKey": API_KEY, "authDomain": urllib.parse.urlparse(server).netloc, "project": PROJECT,
                                    "server": server, "appURL": APP_URL}).encode()
                content_type = "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def open_app(driver, app):
    driver.get(app + "/app.html")
    deadline = time.time() + 60
    while time.time() < deadline:
        if driver.execute_script("return typeof window.run === 'function' && typeof window.auth === 'object'"):
            return
        time.sleep(0.05)
    raise RuntimeError("the app page did not load the SDK: " + str(driver.get_log("browser") if hasattr(driver, "get_log") else ""))


def admin(server, path, body):
    """A REST call as the admin (a development server's `owner` credential)."""
    request = urllib.request.Request(
        server + path, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{path}: {error.code} {error.read().decode()}") from None


# The first factor of an enrolled account: the SDK's error, and the resolver kept on window.
CHALLENGE = """
    try {{ await {first}; return {{signedIn: userInfo(auth.currentUser)}}; }}
    catch (error) {{
      if (error.code !== "auth/multi-factor-auth-required") throw error;
      window.resolver = getMultiFactorResolver(auth, error);
      return {{code: error.code, hints: resolver.hints.map(h => ({{uid: h.uid, factorId: h.factorId, displayName: h.displayName}})),
               current: auth.currentUser && auth.currentUser.uid}};
    }}"""


def resolve(driver, hint, code):
    """resolver.resolveSignIn with the TOTP code `code`: the signed-in user and its token's claims, or the error."""
    return call(driver, f"""
        const assertion = TotpMultiFactorGenerator.assertionForSignIn({json.dumps(hint)}, {json.dumps(code)});
        const credential = await resolver.resolveSignIn(assertion);
        const token = await getIdTokenResult(credential.user);
        return {{user: userInfo(credential.user), current: auth.currentUser && auth.currentUser.uid,
                 secondFactor: token.signInSecondFactor, provider: token.signInProvider,
                 identifier: token.claims.firebase.second_factor_identifier}};""")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--sdk", required=True)
    args = parser.parse_args()
    server = args.server.rstrip("/")
    checks = Checks()
    check_generator(checks)
    app = serve_app(args.sdk, server)
    driver = make_driver()
    try:
        run(driver, server, app, checks)
    except Exception:
        checks.failures.append("stopped: " + traceback.format_exc())
    finally:
        driver.quit()
    print(f"{checks.passed} passed, {len(checks.failures)} failed")
    for item in checks.failures:
        print("FAIL: " + item)
    sys.exit(1 if checks.failures else 0)


def run(driver, server, app, checks):
    open_app(driver, app)
    email = f"totp-{RUN}@example.com"
    password = "totp-password-1"

    # A password account, its address verified by the link the admin asked for, signed in afresh.
    result = call(driver, f"""
        const credential = await createUserWithEmailAndPassword(auth, "{email}", "{password}");
        return userInfo(credential.user);""")
    if not checks.check(result["ok"] and result["value"]["email"] == email, f"createUserWithEmailAndPassword: {result}"):
        return
    uid = result["value"]["uid"]
    link = admin(server, f"/v1/projects/{PROJECT}/accounts:sendOobCode",
                 {"requestType": "VERIFY_EMAIL", "email": email, "returnOobLink": True})["oobLink"]
    oob_code = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["oobCode"][0]
    result = call(driver, f"""
        await applyActionCode(auth, {json.dumps(oob_code)});
        await signOut(auth);
        const credential = await signInWithEmailAndPassword(auth, "{email}", "{password}");
        return userInfo(credential.user);""")
    checks.check(result["ok"] and result["value"]["emailVerified"] and result["value"]["factors"] == [],
                 f"applyActionCode then a fresh sign-in: verified, no factors: {result}")

    # Enrolment: the secret the SDK is given, the authenticator app's code for it.
    result = call(driver, """
        const session = await multiFactor(auth.currentUser).getSession();
        window.secret = await TotpMultiFactorGenerator.generateSecret(session);
        return {secretKey: secret.secretKey, hashingAlgorithm: secret.hashingAlgorithm, codeLength: secret.codeLength,
                codeIntervalSeconds: secret.codeIntervalSeconds, deadline: secret.enrollmentCompletionDeadline};""")
    if not checks.check(result["ok"], f"getSession and generateSecret: {result}"):
        return
    secret = result["value"]
    checks.check(secret["hashingAlgorithm"] == "SHA1" and secret["codeLength"] == 6 and secret["codeIntervalSeconds"] == 30,
                 f"the secret's parameters are an authenticator app's defaults: {secret}")
    checks.check(bool(secret["deadline"]) and "GMT" in secret["deadline"], f"the enrolment deadline parses as a date: {secret}")
    authenticator = Authenticator(base32_secret(secret["secretKey"]))
    checks.check(len(authenticator.secret) >= 10, f"the secret is at least 80 bits: {secret['secretKey']}")

    result = call(driver, f"""
        const wrong = TotpMultiFactorGenerator.assertionForEnrollment(secret, {json.dumps(authenticator.wrong())});
        try {{ await multiFactor(auth.currentUser).enroll(wrong, "Phone"); return "no error"; }}
        catch (error) {{ return error.code; }}""")
    checks.check(result == {"ok": True, "value": "auth/invalid-verification-code"}, f"enroll with a wrong code: {result}")
    result = call(driver, f"""
        const assertion = TotpMultiFactorGenerator.assertionForEnrollment(secret, {json.dumps(authenticator.next())});
        await multiFactor(auth.currentUser).enroll(assertion, "Phone");
        const token = await getIdTokenResult(auth.currentUser);
        return {{user: userInfo(auth.currentUser), secondFactor: token.signInSecondFactor,
                 identifier: token.claims.firebase.second_factor_identifier}};""")
    if not checks.check(result["ok"], f"enroll: {result}"):
        return
    factors = result["value"]["user"]["factors"]
    checks.check(len(factors) == 1 and factors[0]["factorId"] == "totp" and factors[0]["displayName"] == "Phone"
                 and bool(factors[0]["uid"]) and "GMT" in (factors[0]["enrollmentTime"] or ""),
                 f"enrolledFactors shows the TOTP factor: {factors}")
    factor = factors[0]["uid"] if factors else None
    checks.check(result["value"]["secondFactor"] == "totp" and result["value"]["identifier"] == factor,
                 f"the enrolment's token claims the factor: {result}")
    result = call(driver, f"""return secret.generateQrCodeUrl("{email}", "ActionLinks");""")
    url = result.get("value") or ""
    parsed = urllib.parse.urlparse(url)
    query = urllib.parse.parse_qs(parsed.query)
    # The SDK leaves `period` out of the URL (an authenticator app's default, 30 s, is the server's).
    checks.check(result["ok"] and url.startswith("otpauth://totp/") and urllib.parse.unquote(parsed.path) == f"/ActionLinks:{email}"
                 and query.get("secret") == [secret["secretKey"]] and query.get("issuer") == ["ActionLinks"]
                 and query.get("algorithm") == ["SHA1"] and query.get("digits") == ["6"] and query.get("period", ["30"]) == ["30"],
                 f"generateQrCodeUrl: {result}")
    lookup = admin(server, f"/v1/projects/{PROJECT}/accounts:lookup", {"localId": [uid]})["users"][0]
    checks.check([(m.get("mfaEnrollmentId"), m.get("totpInfo"), m.get("displayName")) for m in lookup.get("mfaInfo", [])]
                 == [(factor, {}, "Phone")], f"the admin's lookup lists the factor: {lookup.get('mfaInfo')}")

    # Sign-in: the password asks for the second factor; wrong and out-of-window codes are refused.
    result = call(driver, "await signOut(auth);" + CHALLENGE.format(first=f'signInWithEmailAndPassword(auth, "{email}", "{password}")'))
    checks.check(result["ok"] and result["value"].get("code") == "auth/multi-factor-auth-required" and result["value"]["current"] is None,
                 f"a password sign-in is auth/multi-factor-auth-required: {result}")
    hints = result["value"].get("hints") if result["ok"] else None
    checks.check(hints == [{"uid": factor, "factorId": "totp", "displayName": "Phone"}], f"the resolver's hints: {hints}")
    if not hints:
        return
    hint = hints[0]["uid"]
    result = resolve(driver, hint, authenticator.wrong())
    checks.check(not result["ok"] and result["code"] == "auth/invalid-verification-code", f"resolveSignIn with a wrong code: {result}")
    result = resolve(driver, hint, authenticator.far())
    checks.check(not result["ok"] and result["code"] == "auth/invalid-verification-code",
                 f"resolveSignIn with a code ten minutes ahead: {result}")
    used = authenticator.next()
    result = resolve(driver, hint, used)
    checks.check(result["ok"] and result["value"]["user"]["uid"] == uid and result["value"]["current"] == uid,
                 f"resolveSignIn with the next step's code signs in: {result}")
    checks.check(result["ok"] and result["value"]["secondFactor"] == "totp" and result["value"]["provider"] == "password"
                 and result["value"]["identifier"] == factor, f"the token's signInSecondFactor is totp: {result}")
    checks.check(result["ok"] and [f["factorId"] for f in result["value"]["user"]["factors"]] == ["totp"],
                 f"the signed-in user's enrolledFactors: {result}")

    # A code is used once: a new sign-in cannot replay it; a later step's code signs in.
    result = call(driver, "await signOut(auth);" + CHALLENGE.format(first=f'signInWithEmailAndPassword(auth, "{email}", "{password}")'))
    checks.check(result["ok"] and result["value"].get("code") == "auth/multi-factor-auth-required", f"the second sign-in: {result}")
    result = resolve(driver, hint, used)
    checks.check(not result["ok"] and result["code"] == "auth/invalid-verification-code", f"a replayed code is refused: {result}")
    result = resolve(driver, hint, authenticator.next())
    checks.check(result["ok"] and result["value"]["current"] == uid and result["value"]["secondFactor"] == "totp",
                 f"a later step's code signs in: {result}")

    # An email link asks for the second factor too.
    result = call(driver, f"""
        await signOut(auth);
        await sendSignInLinkToEmail(auth, "{email}", {{url: "{app}/finish.html", handleCodeInApp: true}});
        return true;""")
    checks.check(result["ok"], f"sendSignInLinkToEmail: {result}")
    code = last_code(server, email, "EMAIL_SIGNIN")
    if not checks.check(code is not None, "the sign-in link is listed"):
        return
    link = code["oobLink"]
    result = call(driver, CHALLENGE.format(
        first=f'(isSignInWithEmailLink(auth, {json.dumps(link)}) ? signInWithEmailLink(auth, "{email}", {json.dumps(link)}) '
              f': Promise.reject(new Error("not a sign-in link")))'))
    checks.check(result["ok"] and result["value"].get("code") == "auth/multi-factor-auth-required"
                 and result["value"]["hints"] == hints, f"signInWithEmailLink is auth/multi-factor-auth-required: {result}")
    result = resolve(driver, hint, authenticator.next())
    checks.check(result["ok"] and result["value"]["current"] == uid and result["value"]["secondFactor"] == "totp"
                 and result["value"]["provider"] == "password", f"the email link's resolver signs in: {result}")

    # Unenrolling the session's own factor, at once: the server revokes every session, that one too
    # even when it signed in this very second, so the SDK's reload after the withdrawal fails
    # (auth/user-token-expired) and it signs out, or it signs out quietly.
    result = call(driver, f"""
        let outcome = "no error";
        try {{ await multiFactor(auth.currentUser).unenroll({json.dumps(hint)}); }}
        catch (error) {{ outcome = error.code; }}
        for (let i = 0; i < 50 && auth.currentUser; i++) await new Promise(resolve => setTimeout(resolve, 100));
        return {{outcome, current: auth.currentUser && auth.currentUser.uid}};""")
    checks.check(result["ok"] and result["value"]["outcome"] in ("no error", "auth/user-token-expired"),
                 f"unenroll of the session's own factor: {result}")
    checks.check(result["ok"] and result["value"]["current"] is None, f"the app is signed out after the withdrawal: {result}")
    lookup = admin(server, f"/v1/projects/{PROJECT}/accounts:lookup", {"localId": [uid]})["users"][0]
    checks.check(not lookup.get("mfaInfo"), f"the factor is gone: {lookup.get('mfaInfo')}")
    # Revocation is by the second (validSince): to end a session of the withdrawal's own second, the
    # server revokes through the end of that second, so a sign-in in the same second would be
    # revoked too. The next sign-in waits for the second to turn (a boundary, not an event).
    time.sleep(1.1)
    result = call(driver, CHALLENGE.format(first=f'signInWithEmailAndPassword(auth, "{email}", "{password}")'))
    checks.check(result["ok"] and (result["value"].get("signedIn") or {}).get("uid") == uid
                 and result["value"]["signedIn"]["factors"] == [], f"a password sign-in gives tokens directly again: {result}")
    result = call(driver, "const token = await getIdTokenResult(auth.currentUser); return token.signInSecondFactor;")
    checks.check(result == {"ok": True, "value": None}, f"without a second factor in the token: {result}")


if __name__ == "__main__":
    main()
