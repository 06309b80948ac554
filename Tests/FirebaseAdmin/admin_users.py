"""Drives an ActionLinks server through firebase-admin's whole user API, as a backend that used
Firebase Auth would (FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:<port>: the SDK sends `Bearer owner`).
Client calls (sign-in, refresh) go to the same server's REST API with the API key, as the apps' SDKs
would send them. Prints one JSON object of what it saw; FirebaseAdminTests.swift checks it.

    python3 admin_users.py <service-account.json>

The service-account file is the one `actionlinks service-account --out` wrote: custom tokens are
signed with it (RS256), with the emulator switch off for that one call, as a production backend
signs them; everything else runs in emulator mode.
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

import firebase_admin
from firebase_admin import _utils, auth, credentials, exceptions, tenant_mgt

PROJECT = "demo-actionlinks"
API_KEY = "demo-api-key"
HOST = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]

# Firebase's example parameters and hash (github.com/firebase/scrypt): the password is user1password.
SCRYPT_KEY = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
SCRYPT_SEPARATOR = "Bw=="
SCRYPT_SALT = "42xEC+ixf3L2lw=="
SCRYPT_HASH = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="


def client(operation, body):
    """A client's REST call with the API key; returns (status, JSON)."""
    url = f"http://{HOST}/v1/accounts:{operation}?key={API_KEY}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def error_code(answer):
    return answer.get("error", {}).get("message", "").split(" : ")[0]


class OwnerCredential(credentials.Base):
    """What the SDK itself uses in emulator mode, for the tenant API (which never switches to it)."""

    def get_credential(self):
        return _utils.EmulatorAdminCredentials()


def main() -> None:
    service_account = sys.argv[1]
    app = firebase_admin.initialize_app(OwnerCredential(), options={"projectId": PROJECT})
    result = {}

    # Create, read by uid / email / phone, several at once.
    ann = auth.create_user(
        uid="ann-uid", email="Ann@Example.com", password="first-password", display_name="Ann", phone_number="+15555550100",
        photo_url="https://example.com/ann.png", email_verified=False)
    result["created"] = {"uid": ann.uid, "email": ann.email, "phone": ann.phone_number, "name": ann.display_name}
    result["byEmail"] = auth.get_user_by_email("ann@example.com").uid
    result["byPhone"] = auth.get_user_by_phone_number("+15555550100").uid
    found = auth.get_users([auth.UidIdentifier("ann-uid"), auth.EmailIdentifier("nobody@example.com")])
    result["getUsers"] = {"found": [u.uid for u in found.users], "notFound": len(found.not_found)}
    try:
        auth.create_user(uid="ann-uid")
        result["duplicateUid"] = "no error"
    except auth.UidAlreadyExistsError:
        result["duplicateUid"] = "UidAlreadyExistsError"
    try:
        auth.create_user(email="ann@example.com")
        result["duplicateEmail"] = "no error"
    except auth.EmailAlreadyExistsError:
        result["duplicateEmail"] = "EmailAlreadyExistsError"
    try:
        auth.get_user("nobody")
        result["missing"] = "no error"
    except auth.UserNotFoundError:
        result["missing"] = "UserNotFoundError"

    # Update, claims.
    updated = auth.update_user("ann-uid", display_name="Ann Example", email_verified=True, phone_number=auth.DELETE_ATTRIBUTE)
    result["updated"] = {"name": updated.display_name, "verified": updated.email_verified, "phone": updated.phone_number}
    auth.set_custom_user_claims("ann-uid", {"role": "admin", "level": 3})
    result["claims"] = auth.get_user("ann-uid").custom_claims
    try:
        auth.set_custom_user_claims("ann-uid", {"sub": "x"})
        result["reservedClaim"] = "no error"
    except ValueError as error:
        result["reservedClaim"] = "ValueError"

    # A client signs in; the backend verifies the token, then revokes the user's sessions.
    status, signed_in = client("signInWithPassword", {"email": "ann@example.com", "password": "first-password", "returnSecureToken": True})
    result["signInStatus"] = status
    claims = auth.verify_id_token(signed_in["idToken"])
    result["verified"] = {"uid": claims["uid"], "role": claims.get("role"), "level": claims.get("level"),
                          "provider": claims["firebase"]["sign_in_provider"]}
    result["notRevokedYet"] = auth.verify_id_token(signed_in["idToken"], check_revoked=True)["uid"]
    time.sleep(1.1)  # validSince is in whole seconds: a token of the same second stays valid
    auth.revoke_refresh_tokens("ann-uid")
    try:
        auth.verify_id_token(signed_in["idToken"], check_revoked=True)
        result["revoked"] = "no error"
    except auth.RevokedIdTokenError:
        result["revoked"] = "RevokedIdTokenError"
    status, refreshed = client_token(signed_in["refreshToken"])
    result["refreshAfterRevoke"] = [status, error_code(refreshed)]

    # Disabled users: sign-in refused; check_revoked reports it.
    auth.update_user("ann-uid", disabled=True)
    status, answer = client("signInWithPassword", {"email": "ann@example.com", "password": "first-password"})
    result["disabledSignIn"] = [status, error_code(answer)]
    auth.update_user("ann-uid", disabled=False)

    # Session cookies.
    status, again = client("signInWithPassword", {"email": "ann@example.com", "password": "first-password", "returnSecureToken": True})
    cookie = auth.create_session_cookie(again["idToken"], expires_in=3600)
    result["sessionCookie"] = auth.verify_session_cookie(cookie, check_revoked=True)["uid"]

    # Listing, page by page.
    for index in range(5):
        auth.create_user(uid=f"list-{index}", email=f"list{index}@example.com")
    page = auth.list_users(max_results=2)
    pages = 0
    seen = []
    while page:
        pages += 1
        seen += [user.uid for user in page.users]
        page = page.get_next_page()
    result["listed"] = {"pages": pages, "uids": seen}

    # Import with Firebase's scrypt; the imported password then signs in.
    hash_alg = auth.UserImportHash.scrypt(
        key=base64.b64decode(SCRYPT_KEY), rounds=8, memory_cost=14, salt_separator=base64.b64decode(SCRYPT_SEPARATOR))
    records = [
        auth.ImportUserRecord(uid="imported-1", email="imported@example.com", password_hash=base64.b64decode(SCRYPT_HASH),
                              password_salt=base64.b64decode(SCRYPT_SALT), email_verified=True),
        auth.ImportUserRecord(uid="imported-2", email="ann@example.com"),
    ]
    imported = auth.import_users(records, hash_alg=hash_alg)
    result["imported"] = {"success": imported.success_count, "failure": imported.failure_count,
                          "errors": [[e.index, e.reason] for e in imported.errors]}
    status, answer = client("signInWithPassword", {"email": "imported@example.com", "password": "user1password", "returnSecureToken": True})
    result["importedSignIn"] = [status, answer.get("localId")]
    status, answer = client("signInWithPassword", {"email": "imported@example.com", "password": "user1password", "returnSecureToken": True})
    result["importedSignInAgain"] = [status, answer.get("localId")]

    # Custom tokens, signed with the service account (emulator mode off for that call).
    minting = firebase_admin.initialize_app(credentials.Certificate(service_account), options={"projectId": PROJECT}, name="minting")
    del os.environ["FIREBASE_AUTH_EMULATOR_HOST"]
    try:
        token = auth.create_custom_token("custom-uid", {"plan": "gold"}, app=minting).decode()
    finally:
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = HOST
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    result["customTokenHeader"] = header["alg"]
    status, answer = client("signInWithCustomToken", {"token": token, "returnSecureToken": True})
    custom_claims = auth.verify_id_token(answer["idToken"]) if status == 200 else {}
    result["customSignIn"] = [status, answer.get("isNewUser"), custom_claims.get("uid"), custom_claims.get("plan"),
                              custom_claims.get("firebase", {}).get("sign_in_provider")]
    status, answer = client("signInWithCustomToken", {"token": token[:-4] + "AAAA", "returnSecureToken": True})
    result["tamperedCustomToken"] = [status, error_code(answer)]

    # Delete one, then several.
    auth.delete_user("list-0")
    deleted = auth.delete_users(["list-1", "list-2", "nobody"])
    result["deleted"] = {"success": deleted.success_count, "failure": deleted.failure_count}
    try:
        auth.get_user("list-0")
        result["afterDelete"] = "no error"
    except auth.UserNotFoundError:
        result["afterDelete"] = "UserNotFoundError"

    # Tenants (the SDK's tenant API always calls Google's host: pointed here for the test), and a
    # tenant's own users.
    tenant_mgt._TenantManagementService.TENANT_MGT_URL = f"http://{HOST}/v2"
    tenant = tenant_mgt.create_tenant(display_name="Team-A", allow_password_sign_up=True, enable_email_link_sign_in=True)
    got = tenant_mgt.get_tenant(tenant.tenant_id)
    changed = tenant_mgt.update_tenant(tenant.tenant_id, display_name="Team-B")
    listed = [t.tenant_id for t in tenant_mgt.list_tenants().iterate_all()]
    tenant_auth = tenant_mgt.auth_for_tenant(tenant.tenant_id)
    tenant_user = tenant_auth.create_user(email="ann@example.com", password="tenant-password")
    status, answer = client("signInWithPassword", {"email": "ann@example.com", "password": "tenant-password",
                                                   "tenantId": tenant.tenant_id, "returnSecureToken": True})
    tenant_claims = tenant_auth.verify_id_token(answer["idToken"]) if status == 200 else {}
    result["tenant"] = {"id": tenant.tenant_id, "name": got.display_name, "renamed": changed.display_name,
                        "listed": tenant.tenant_id in listed, "userTenant": tenant_user.tenant_id,
                        "tokenTenant": tenant_claims.get("firebase", {}).get("tenant"), "signIn": status}
    tenant_mgt.delete_tenant(tenant.tenant_id)
    try:
        tenant_mgt.get_tenant(tenant.tenant_id)
        result["tenantDeleted"] = "no error"
    except tenant_mgt.TenantNotFoundError:
        result["tenantDeleted"] = "TenantNotFoundError"

    print(json.dumps(result))


def client_token(refresh_token):
    url = f"http://{HOST}/securetoken.googleapis.com/v1/token?key={API_KEY}"
    body = f"grant_type=refresh_token&refresh_token={refresh_token}".encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


if __name__ == "__main__":
    main()
