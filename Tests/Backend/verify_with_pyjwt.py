"""Verifies an ID token the way docs/ACCOUNTS.md tells a Python backend to: PyJWT with the server's
JWKS. Prints the claims as JSON; exit 1 with the error when the token does not verify.

    python3 verify_with_pyjwt.py <server base URL> <project> <id token>
"""
import json
import sys

import jwt

base, project, token = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    jwks = jwt.PyJWKClient(f"{base}/.well-known/jwks.json")
    key = jwks.get_signing_key_from_jwt(token).key
    claims = jwt.decode(token, key, algorithms=["RS256"], audience=project, issuer=f"https://securetoken.google.com/{project}")
except Exception as error:  # the test prints what PyJWT said
    print(f"{type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(1)
print(json.dumps(claims))
