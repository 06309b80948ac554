"""Writes the signed SAML responses that ActionLinksSAMLTests checks (Tests/ActionLinksSAMLTests/
Fixtures), made by the same pysaml2 IdP as the end-to-end tests, with a fresh key:

    bash scripts/saml-idp.sh install
    ~/.cache/actionlinks/saml-idp-*/bin/python Tests/SAMLIdP/make_fixtures.py Tests/ActionLinksSAMLTests/Fixtures

Each answers the AuthnRequest `_0123456789abcdef0123456789abcdef01234567` of the SP
https://links.test.example (ACS https://links.test.example/__/auth/handler); the tests set their
clock to the response's IssueInstant. `other-cert.pem` is the certificate of another key.
"""

import base64
import os
import sys
import tempfile
import zlib

from idp import IdP, make_key

SP = "https://links.test.example"
ACS = SP + "/__/auth/handler"
REQUEST_ID = "_0123456789abcdef0123456789abcdef01234567"
USER = {
    "nameId": "alice@corp.example",
    "attributes": {"displayName": ["Alice Example"], "groups": ["staff", "admins"]},
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        setups = {
            "signed-assertion": {"sign": "assertion"},
            "signed-response": {"sign": "response"},
            "signed-both": {"sign": "both"},
            "unsigned": {"sign": "none"},
            "signed-assertion-sha1": {"sign": "assertion", "alg": "sha1"},
        }
        idp = IdP("https://idp.test.example", directory, [(SP, ACS, {})])
        with open(os.path.join(directory, "idp-cert.pem")) as f:
            cert = f.read()
        request = (
            f'<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            f'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{REQUEST_ID}" Version="2.0" '
            f'IssueInstant="2026-01-01T00:00:00Z" Destination="https://idp.test.example/sso" '
            f'AssertionConsumerServiceURL="{ACS}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">'
            f"<saml:Issuer>{SP}</saml:Issuer></samlp:AuthnRequest>"
        )
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        encoded = base64.b64encode(compressor.compress(request.encode()) + compressor.flush()).decode()
        message = idp.server.parse_authn_request(encoded).message
        for name, setup in setups.items():
            idp.options[SP] = setup
            response, _ = idp.respond(message, USER)
            with open(os.path.join(out, name + ".xml"), "w") as f:
                f.write(response)
        with open(os.path.join(out, "idp-cert.pem"), "w") as f:
            f.write(cert)
    with tempfile.TemporaryDirectory() as directory:
        _, other = make_key(directory)
        with open(other) as f, open(os.path.join(out, "other-cert.pem"), "w") as g:
            g.write(f.read())


if __name__ == "__main__":
    main()
