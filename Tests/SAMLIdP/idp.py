"""A SAML 2.0 identity provider for the SAML sign-in tests: pysaml2's IdP (saml2.server.Server),
which parses the AuthnRequest (HTTP-Redirect binding), signs the Response with xmlsec1 and posts
it back (HTTP-POST binding). Started by scripts/saml-idp.sh on a free loopback port.

    python idp.py --directory DIR --sp ENTITY_ID ACS_URL [sign=assertion|response|both|none] [alg=sha256|sha1] [--sp ...]

It knows the service providers it is given, as an IdP knows the SPs registered with it: entity ID,
ACS URL, and whether it signs the assertion (the default), the response, both or neither, with
RSA-SHA256 (the default) or RSA-SHA1. It generates its own RSA key and self-signed certificate in
DIR. Its entity ID is <url>/metadata, where it also serves its metadata (with the certificate).

- GET  /sso?SAMLRequest&RelayState: the login form (HTTP-Redirect binding).
- POST /login (username, password, the pending request): the auto-submitting form that posts
  SAMLResponse and RelayState to the SP's ACS URL.
- PUT  /users/<username> {"password", "nameId", "nameIdFormat": "email"|"persistent",
  "attributes": {name: [values]}}: adds a user (the tests make a fresh one each).
"""

import argparse
import datetime
import html
import json
import os
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS, NAMEID_FORMAT_PERSISTENT, NameID
from saml2.server import Server
from saml2.sigver import get_xmlsec_binary
from saml2.authn_context import PASSWORD
from saml2.xmldsig import DIGEST_SHA1, DIGEST_SHA256, SIG_RSA_SHA1, SIG_RSA_SHA256

FORMATS = {"email": NAMEID_FORMAT_EMAILADDRESS, "persistent": NAMEID_FORMAT_PERSISTENT}
SIGNING = {"assertion": (False, True), "response": (True, False), "both": (True, True), "none": (False, False)}
ALGORITHMS = {"sha256": (SIG_RSA_SHA256, DIGEST_SHA256), "sha1": (SIG_RSA_SHA1, DIGEST_SHA1)}


def make_key(directory):
    key_path = os.path.join(directory, "idp-key.pem")
    cert_path = os.path.join(directory, "idp-cert.pem")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ActionLinks test IdP")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    with open(key_path, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
            )
        )
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


def sp_metadata(entity_id, acs):
    return f"""<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="{html.escape(entity_id)}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true">
    <md:NameIDFormat>{NAMEID_FORMAT_EMAILADDRESS}</md:NameIDFormat>
    <md:NameIDFormat>{NAMEID_FORMAT_PERSISTENT}</md:NameIDFormat>
    <md:AssertionConsumerService Binding="{BINDING_HTTP_POST}" Location="{html.escape(acs)}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>"""


class IdP:
    def __init__(self, base, directory, sps):
        key_path, cert_path = make_key(directory)
        config = IdPConfig()
        config.load(
            {
                "entityid": base + "/metadata",
                "service": {
                    "idp": {
                        "name": "ActionLinks test IdP",
                        "endpoints": {"single_sign_on_service": [(base + "/sso", BINDING_HTTP_REDIRECT)]},
                        "policy": {"default": {"lifetime": {"minutes": 5}, "attribute_restrictions": None}},
                        "name_id_format": [NAMEID_FORMAT_EMAILADDRESS, NAMEID_FORMAT_PERSISTENT],
                        "want_authn_requests_signed": False,
                    }
                },
                "key_file": key_path,
                "cert_file": cert_path,
                "xmlsec_binary": get_xmlsec_binary(["/usr/bin", "/usr/local/bin"]),
                "metadata": {"inline": [sp_metadata(entity, acs) for entity, acs, _ in sps]},
            }
        )
        self.server = Server(config=config)
        self.config = config
        self.options = {entity: options for entity, _, options in sps}
        self.users = {}
        self.pending = {}
        self.lock = threading.Lock()
        # pysaml2's Server is not documented as thread-safe: one request at a time uses it.
        self.saml = threading.Lock()

    def respond(self, message, user):
        """The response (XML text) to an AuthnRequest for `user`, signed as the SP is set up, and
        where it goes."""
        args = self.server.response_args(message, [BINDING_HTTP_POST])
        options = self.options.get(args["sp_entity_id"], {})
        sign, algorithm = options.get("sign", "assertion"), options.get("alg", "sha256")
        name_id = NameID(format=FORMATS[user.get("nameIdFormat", "email")], text=user["nameId"])
        sign_response, sign_assertion = SIGNING[sign]
        sign_alg, digest_alg = ALGORITHMS[algorithm]
        response = self.server.create_authn_response(
            user.get("attributes", {}),
            userid=user["nameId"],
            name_id=name_id,
            authn={"class_ref": PASSWORD, "authn_auth": self.config.entityid},
            sign_response=sign_response,
            sign_assertion=sign_assertion,
            sign_alg=sign_alg,
            digest_alg=digest_alg,
            **args,
        )
        return str(response), args["destination"]

    def metadata_xml(self):
        return create_metadata_string(None, config=self.config).decode()


class Handler(BaseHTTPRequestHandler):
    idp: IdP = None

    def log_message(self, format, *args):
        sys.stderr.write("idp: " + (format % args) + "\n")

    def answer(self, status, body, content_type="text/html; charset=utf-8"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        if url.path == "/metadata":
            with self.idp.saml:
                metadata = self.idp.metadata_xml()
            return self.answer(200, metadata, "application/samlmetadata+xml")
        if url.path != "/sso":
            return self.answer(404, "not found")
        if "SAMLRequest" not in query:
            return self.answer(400, "no SAMLRequest")
        try:
            with self.idp.saml:
                request = self.idp.server.parse_authn_request(query["SAMLRequest"], BINDING_HTTP_REDIRECT)
        except Exception as error:  # pysaml2 raises many kinds
            return self.answer(400, "bad AuthnRequest: " + html.escape(repr(error)))
        key = secrets.token_urlsafe(16)
        with self.idp.lock:
            self.idp.pending[key] = (request.message, query.get("RelayState"))
        form = f"""<!doctype html><title>Sign in</title>
<form method="post" action="/login">
<input type="hidden" name="request" value="{key}">
<label>User <input name="username"></label> <label>Password <input name="password" type="password"></label>
<button>Sign in</button></form>"""
        return self.answer(200, form)

    def do_PUT(self):
        url = urllib.parse.urlsplit(self.path)
        if not url.path.startswith("/users/"):
            return self.answer(404, "not found")
        length = int(self.headers.get("Content-Length", "0"))
        user = json.loads(self.rfile.read(length))
        with self.idp.lock:
            self.idp.users[urllib.parse.unquote(url.path[len("/users/"):])] = user
        self.send_response(204)
        self.end_headers()

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/login":
            return self.answer(404, "not found")
        length = int(self.headers.get("Content-Length", "0"))
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode(), keep_blank_values=True))
        with self.idp.lock:
            pending = self.idp.pending.pop(form.get("request", ""), None)
            user = self.idp.users.get(form.get("username", ""))
        if pending is None:
            return self.answer(400, "no such sign-in")
        if user is None or not secrets.compare_digest(user.get("password", ""), form.get("password", "")):
            return self.answer(403, "wrong user name or password")
        message, relay_state = pending
        with self.idp.saml:
            response, destination = self.idp.respond(message, user)
            http = self.idp.server.apply_binding(BINDING_HTTP_POST, response, destination, relay_state, response=True)
        return self.answer(200, http["data"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--directory", required=True)
    parser.add_argument("--sp", action="append", nargs="+", default=[], help="ENTITY_ID ACS_URL [sign=...] [alg=...]")
    options = parser.parse_args()
    sps = []
    for entity, acs, *settings in options.sp:
        chosen = dict(item.split("=", 1) for item in settings)
        if chosen.get("sign", "assertion") not in SIGNING or chosen.get("alg", "sha256") not in ALGORITHMS:
            parser.error(f"sign must be one of {', '.join(SIGNING)}; alg one of {', '.join(ALGORITHMS)}")
        sps.append((entity, acs, chosen))
    httpd = ThreadingHTTPServer((options.host, options.port), Handler)
    base = f"http://{options.host}:{httpd.server_address[1]}"
    Handler.idp = IdP(base, options.directory, sps)
    print(base, flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
