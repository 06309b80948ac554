"""Drives an ActionLinks server with the real firebase-admin SDK, as a backend would.

Run with FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:<port> (the SDK then sends `Authorization: Bearer owner`
and talks plain HTTP to that host). Prints one JSON object on standard output.

    python3 admin_links.py links <email>     create the user, generate sign-in, reset and verification links
    python3 admin_links.py verify <id-token> verify an ID token the server issued
"""
import json
import sys

import firebase_admin
from firebase_admin import auth, exceptions

PROJECT = "demo-actionlinks"


def main() -> None:
    firebase_admin.initialize_app(options={"projectId": PROJECT})
    command, argument = sys.argv[1], sys.argv[2]
    if command == "links":
        email = argument
        user = auth.create_user(email=email, password="initial-password-1", email_verified=False)
        found = auth.get_user_by_email(email)
        mobile = auth.ActionCodeSettings(
            url="https://app.example.com/finish",
            handle_code_in_app=True,
            ios_bundle_id="com.example.app",
            android_package_name="com.example.app",
            android_install_app=True,
            android_minimum_version="12",
        )
        web = auth.ActionCodeSettings(url="https://app.example.com/reset")
        result = {
            "uid": user.uid,
            "lookupUid": found.uid,
            "lookupEmail": found.email,
            "signIn": auth.generate_sign_in_with_email_link(email, mobile),
            "reset": auth.generate_password_reset_link(email, web),
            "verify": auth.generate_email_verification_link(email),
        }
        try:
            auth.generate_password_reset_link("nobody-" + email)
            result["unknownUser"] = "no error"
        except (auth.UserNotFoundError, auth.EmailNotFoundError) as error:
            result["unknownUser"] = type(error).__name__
        try:
            auth.generate_password_reset_link(email, auth.ActionCodeSettings(url="https://evil.example.net/"))
            result["badContinueUrl"] = "no error"
        except exceptions.InvalidArgumentError as error:
            result["badContinueUrl"] = str(error)
        print(json.dumps(result))
    elif command == "verify":
        claims = auth.verify_id_token(argument)
        print(json.dumps({"uid": claims["uid"], "email": claims.get("email"), "email_verified": claims.get("email_verified")}))
    else:
        raise SystemExit("unknown command " + command)


if __name__ == "__main__":
    main()
