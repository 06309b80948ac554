"""google-auth (what firebase-admin uses for its credentials) against the server's token endpoint.

Usage: service_account_token.py SERVICE_ACCOUNT_FILE API_BASE PROJECT_ID

Exchanges the file's key for an access token at the file's token_uri, as firebase-admin does, uses
it as the admin credential on the REST API, then posts hand-made assertions that must be refused:
tampered, expired, for another audience, signed with a key the server does not know. Prints one
JSON object.
"""

import json
import sys
import time

import google.auth.crypt
import google.auth.jwt
import google.auth.transport.requests
from google.auth import _helpers
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.oauth2 import service_account

SCOPES = [
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/firebase",
    "https://www.googleapis.com/auth/identitytoolkit",
]
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


def main():
    path, base, project = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as handle:
        info = json.load(handle)
    token_uri = info["token_uri"]
    result = {"tokenUri": token_uri}

    credentials = service_account.Credentials.from_service_account_file(path, scopes=SCOPES)
    credentials.refresh(google.auth.transport.requests.Request())
    result["tokenPrefix"] = credentials.token[:8]
    result["expiresInFuture"] = credentials.expiry is not None and credentials.expiry.timestamp() > time.time() + 3000

    def admin_call(token):
        reply = requests.post(
            f"{base}/v1/projects/{project}/accounts:query",
            json={"returnUserInfo": True},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        return reply.status_code

    result["adminWithToken"] = admin_call(credentials.token)
    result["adminWithForgedToken"] = admin_call(credentials.token[:-4] + ("AAAA" if not credentials.token.endswith("AAAA") else "BBBB"))

    signer = google.auth.crypt.RSASigner.from_service_account_info(info)
    now = int(time.time())

    def claims(**changes):
        payload = {"iss": info["client_email"], "scope": " ".join(SCOPES), "aud": GOOGLE_TOKEN_URI, "iat": now, "exp": now + 3600}
        payload.update(changes)
        return {key: value for key, value in payload.items() if value is not None}

    def exchange(assertion):
        reply = requests.post(
            token_uri,
            data={"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion},
            timeout=60,
        )
        try:
            body = reply.json()
        except ValueError:
            body = {"text": reply.text}
        return {"status": reply.status_code, **body}

    def signed(payload, with_signer=signer):
        return google.auth.jwt.encode(with_signer, payload).decode()

    result["ownAudience"] = exchange(signed(claims(aud=token_uri)))
    good = signed(claims())
    header, payload, signature = good.split(".")
    forged_payload = _helpers.unpadded_urlsafe_b64encode(
        json.dumps(claims(iss="someone-else@" + project + ".iam.gserviceaccount.com")).encode()
    ).decode()
    result["tampered"] = exchange(".".join([header, forged_payload, signature]))
    result["expired"] = exchange(signed(claims(iat=now - 7200, exp=now - 3600)))
    result["tooLong"] = exchange(signed(claims(exp=now + 7200)))
    result["wrongAudience"] = exchange(signed(claims(aud="https://oauth2.example.com/token")))
    result["noScope"] = exchange(signed(claims(scope=None)))
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other_pem = other_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    result["unknownKey"] = exchange(signed(claims(), google.auth.crypt.RSASigner.from_string(other_pem, "0" * 40)))
    result["otherKeySameId"] = exchange(signed(claims(), google.auth.crypt.RSASigner.from_string(other_pem, info["private_key_id"])))
    reply = requests.post(token_uri, data={"grant_type": "client_credentials"}, timeout=60)
    result["otherGrant"] = {"status": reply.status_code, **reply.json()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
