"""A second real OpenID Connect provider for the federated sign-in tests: django-oidc-provider
(PyPI) in a one-file Django project, on a free loopback port.

    python provider.py DIRECTORY    # prints http://127.0.0.1:<port>/openid (its issuer), then serves

It keeps its database in DIRECTORY (made anew by scripts/test.sh). Unlike oidc-provider-mock, its
ID tokens carry only `iss sub aud exp iat auth_time nonce at_hash` (django-oidc-provider's default,
OIDC_IDTOKEN_INCLUDE_CLAIMS false): the profile is served at `/openid/userinfo`. Its token endpoint
reads HTTP Basic client credentials without form-decoding them. Users log in with Django's own login
form (`/accounts/login/`, CSRF-protected); the client never asks for consent.

The fixtures, which FederatedTestSupport.swift names too:
- the client `actionlinks-django`, confidential, whose secret has `+`, `/` and `=`, redirect URI
  `https://links.test.example/__/auth/handler`;
- the users `ada` (ada@corp.example, Ada Lovelace) and `grace` (grace@corp.example, Grace Hopper),
  password `a good password`, addresses verified.
"""

import os
import socketserver
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

CLIENT_ID = "actionlinks-django"
CLIENT_SECRET = "dj+secret/with=signs+=="
REDIRECT_URI = "https://links.test.example/__/auth/handler"
PASSWORD = "a good password"
USERS = [
    ("ada", "ada@corp.example", "Ada", "Lovelace"),
    ("grace", "grace@corp.example", "Grace", "Hopper"),
]

LOGIN_TEMPLATE = """<!doctype html>
<title>Log in</title>
<form method="post" action="">
{% csrf_token %}
{{ form.as_p }}
<input type="hidden" name="next" value="{{ next }}">
<button type="submit">Log in</button>
</form>
"""


def userinfo(claims, user):
    """OIDC_USERINFO: the standard claims of a Django user (served at /userinfo, not in the ID token)."""
    claims["name"] = user.get_full_name()
    claims["given_name"] = user.first_name
    claims["family_name"] = user.last_name
    claims["preferred_username"] = user.username
    claims["email"] = user.email
    claims["email_verified"] = True
    return claims


class Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write("%s\n" % (format % args))


def configure(directory, site_url):
    from django.conf import settings

    settings.configure(
        DEBUG=False,
        # A 500's traceback goes to the log (the test script shows it when the provider fails).
        LOGGING={
            "version": 1,
            "handlers": {"stderr": {"class": "logging.StreamHandler"}},
            "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
        },
        SECRET_KEY="actionlinks-test-provider-" + os.urandom(16).hex(),
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "oidc_provider",
        ],
        MIDDLEWARE=[
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ],
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": os.path.join(directory, "provider.sqlite3"),
                # Threads write at once (sessions at login, codes and tokens at the token endpoint):
                # a transaction takes the write lock when it begins (IMMEDIATE), so none fails
                # with "database is locked" when it would upgrade a read; WAL lets reads go on.
                "OPTIONS": {"timeout": 60, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
            }
        },
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "OPTIONS": {
                    "loaders": [
                        ("django.template.loaders.locmem.Loader", {"registration/login.html": LOGIN_TEMPLATE}),
                        "django.template.loaders.app_directories.Loader",
                    ],
                    "context_processors": ["django.template.context_processors.request"],
                },
            }
        ],
        # A test provider: a fast hash, so that logins under load stay quick.
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        LOGIN_URL="/accounts/login/",
        USE_TZ=True,
        SITE_URL=site_url,
        OIDC_USERINFO=__name__ + ".userinfo",
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    )


def fixtures():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from django.contrib.auth.models import User
    from oidc_provider.models import Client, ResponseType, RSAKey

    if not RSAKey.objects.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
        RSAKey.objects.create(key=pem.decode())
    for username, email, first, last in USERS:
        if not User.objects.filter(username=username).exists():
            User.objects.create_user(username, email=email, password=PASSWORD, first_name=first, last_name=last)
    if not Client.objects.filter(client_id=CLIENT_ID).exists():
        client = Client.objects.create(
            name="ActionLinks tests",
            client_type="confidential",
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            jwt_alg="RS256",
            require_consent=False,
            reuse_consent=True,
        )
        client.redirect_uris = [REDIRECT_URI]
        client.response_types.add(ResponseType.objects.get(value="code"))
        client.save()


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    # Bind first: the issuer names the port.
    server = make_server("127.0.0.1", 0, lambda environ, start: [], server_class=Server, handler_class=QuietHandler)
    site_url = "http://127.0.0.1:%d" % server.server_port
    configure(directory, site_url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    from django.contrib.auth import views as auth_views
    from django.urls import include, path

    global urlpatterns
    urlpatterns = [
        path("accounts/login/", auth_views.LoginView.as_view()),
        path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
    ]
    call_command("migrate", verbosity=0, interactive=False)
    fixtures()
    server.set_app(get_wsgi_application())
    print(site_url + "/openid", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
