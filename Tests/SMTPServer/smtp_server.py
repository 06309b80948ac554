"""A real SMTP server for the ActionLinksSMTP tests: aiosmtpd (PyPI) on 127.0.0.1, started by
scripts/smtp-server.sh, or by the tests with the venv's python.

    python smtp_server.py --directory DIR [--port N] [--cert PEM --key PEM] [--tls] [--starttls-required]
                          [--auth-required] [--auth-mechanisms PLAIN,LOGIN] [--auth-plaintext]
                          [--user NAME --password SECRET] [--reply-code CODE --reply-at rcpt|data]
                          [--timeout SECONDS]

It prints `listening on smtp://127.0.0.1:<port>` (smtps:// with --tls) once it accepts connections.

- --cert/--key: STARTTLS is offered with that certificate (or, with --tls, every connection is TLS
  from its first byte: implicit TLS, as on port 465).
- --starttls-required: MAIL and the rest are refused until STARTTLS.
- --auth-required: MAIL is refused until AUTH succeeds. AUTH accepts only --user/--password (535
  otherwise), offers the mechanisms of --auth-mechanisms, and only over TLS unless --auth-plaintext.
- --reply-code: RCPT (or, with --reply-at data, the end of DATA) is answered with that code.
- --timeout: a connection idle for that long is closed by the server (300 s by default).

What happens is written to DIR, one JSON object a line, for the tests to read:
- events.jsonl: connect, tls, auth (mechanism, success), mail, rcpt, rset, quit and disconnect,
  each with the client's port (`peer`), which names the connection.
- messages.jsonl: each accepted message's envelope, the .eml file it was written to, and what
  Python's email package (policy.default) reads from it: decoded subject, addresses, both parts
  (line ends as \\n), defects, and the longest line and whether every byte is 7-bit.
"""

import argparse
import asyncio
import email
import email.policy
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

write_lock = threading.Lock()


def append_line(path, record):
    with write_lock, open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(record, ensure_ascii=False) + "\n")


def parsed(content):
    """What a recipient's mail program sees in `content`, as Python's email package reads it."""
    message = email.message_from_bytes(content, policy=email.policy.default)
    defects = [repr(defect) for defect in message.defects]
    parts = {}
    for part in message.walk():
        defects += [repr(defect) for defect in part.defects]
        if part.get_content_maintype() == "text":
            parts[part.get_content_subtype()] = {
                "content": part.get_content().replace("\r\n", "\n"),
                "transferEncoding": part.get("Content-Transfer-Encoding", ""),
                "charset": part.get_content_charset(),
            }
    sender = message["from"]
    return {
        "subject": str(message["subject"]),
        "fromName": sender.addresses[0].display_name if sender else None,
        "fromAddress": sender.addresses[0].addr_spec if sender else None,
        "to": [address.addr_spec for address in message["to"].addresses] if message["to"] else [],
        "messageID": message["message-id"],
        "date": message["date"],
        "dateTimestamp": message["date"].datetime.timestamp() if message["date"] else None,
        "contentType": message.get_content_type(),
        "mimeVersion": message["mime-version"],
        "autoSubmitted": message["auto-submitted"],
        "text": parts.get("plain", {}).get("content"),
        "html": parts.get("html", {}).get("content"),
        "textTransferEncoding": parts.get("plain", {}).get("transferEncoding"),
        "htmlTransferEncoding": parts.get("html", {}).get("transferEncoding"),
        "defects": defects,
        "longestLine": max(len(line) for line in content.split(b"\r\n")),
        "sevenBit": all(byte < 128 for byte in content),
    }


class Recorder:
    """aiosmtpd's handler: records each step and message in the directory."""

    def __init__(self, directory, reply_code, reply_at):
        self.directory = directory
        self.events = os.path.join(directory, "events.jsonl")
        self.messages = os.path.join(directory, "messages.jsonl")
        self.reply_code = reply_code
        self.reply_at = reply_at
        self.count = 0

    def event(self, session, name, **fields):
        append_line(self.events, {"event": name, "peer": session.peer[1], **fields})

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        self.event(session, "mail", tls=session.ssl is not None or server.implicit_tls)
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        self.event(session, "rcpt")
        if self.reply_code and self.reply_at == "rcpt":
            return f"{self.reply_code} Refused by the test server (--reply-code)"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_RSET(self, server, session, envelope):
        self.event(session, "rset")
        return "250 OK"

    async def handle_QUIT(self, server, session, envelope):
        self.event(session, "quit")
        return "221 Bye"

    async def handle_DATA(self, server, session, envelope):
        if self.reply_code and self.reply_at == "data":
            return f"{self.reply_code} Refused by the test server (--reply-code)"
        self.count += 1
        path = os.path.join(self.directory, f"message-{self.count}.eml")
        with open(path, "wb") as file:
            file.write(envelope.original_content)
        append_line(
            self.messages,
            {
                "peer": session.peer[1],
                "mailFrom": envelope.mail_from,
                "rcptTos": envelope.rcpt_tos,
                "eml": path,
                "authenticated": bool(session.authenticated),
                "parsed": parsed(envelope.original_content),
            },
        )
        return "250 OK: queued"


class RecordingSMTP(SMTP):
    """aiosmtpd's protocol, recording connections (a STARTTLS connection is one connection)."""

    def __init__(self, handler, implicit_tls, **kwargs):
        super().__init__(handler, **kwargs)
        self.implicit_tls = implicit_tls
        self.port = None

    def connection_made(self, transport):
        upgrading = self._original_transport is not None
        super().connection_made(transport)
        self.port = self.session.peer[1]
        if upgrading:
            self.event_handler.event(self.session, "tls")
        else:
            self.event_handler.event(self.session, "connect", tls=self.implicit_tls)

    def connection_lost(self, error):
        append_line(self.event_handler.events, {"event": "disconnect", "peer": self.port})
        super().connection_lost(error)


def main():
    # A parent whose threads block signals passes its mask on (Foundation's Process on Linux does):
    # SIGTERM must stop the server whoever started it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--starttls-required", action="store_true")
    parser.add_argument("--auth-required", action="store_true")
    parser.add_argument("--auth-mechanisms", default="PLAIN,LOGIN")
    parser.add_argument("--auth-plaintext", action="store_true")
    parser.add_argument("--user", default="mailer")
    parser.add_argument("--password", default="correct horse battery staple")
    parser.add_argument("--reply-code", type=int)
    parser.add_argument("--reply-at", choices=["rcpt", "data"], default="rcpt")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if (args.tls or args.starttls_required) and not (args.cert and args.key):
        parser.error("--tls and --starttls-required need --cert and --key")
    os.makedirs(args.directory, exist_ok=True)

    context = None
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    offered = {mechanism.strip().upper() for mechanism in args.auth_mechanisms.split(",")}
    excluded = [mechanism for mechanism in ("PLAIN", "LOGIN") if mechanism not in offered]

    def authenticator(server, session, envelope, mechanism, auth_data):
        success = isinstance(auth_data, LoginPassword) and auth_data == LoginPassword(
            args.user.encode(), args.password.encode()
        )
        handler.event(session, "auth", mechanism=mechanism, success=success)
        # handled=False: aiosmtpd answers a refusal with 535 5.7.8 itself.
        return AuthResult(success=success, handled=False)

    handler = Recorder(args.directory, args.reply_code, args.reply_at)
    loop = asyncio.new_event_loop()

    def protocol():
        return RecordingSMTP(
            handler,
            implicit_tls=args.tls,
            loop=loop,
            hostname="smtp.test.example",
            tls_context=None if args.tls else context,
            require_starttls=args.starttls_required,
            auth_required=args.auth_required,
            # aiosmtpd counts only STARTTLS as encryption, so implicit TLS must say so here.
            auth_require_tls=not (args.tls or args.auth_plaintext),
            auth_exclude_mechanism=excluded,
            authenticator=authenticator,
            timeout=args.timeout,
        )

    server = loop.run_until_complete(
        loop.create_server(protocol, host="127.0.0.1", port=args.port, ssl=context if args.tls else None)
    )
    port = server.sockets[0].getsockname()[1]
    print(f"listening on {'smtps' if args.tls else 'smtp'}://127.0.0.1:{port}", flush=True)
    try:
        loop.run_forever()
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main())
