import ActionLinksSMTPTestSupport
import NIOCore
import Testing

@testable import ActionLinksSMTP

@Suite(.timeLimit(.minutes(5)))
struct WireFormatTests {
    static func payload(_ message: String) throws -> String {
        var buffer = try SMTPData.payload(of: Array(message.utf8))
        return buffer.readString(length: buffer.readableBytes)!
    }

    @Test(arguments: [
        ("", ".\r\n"),
        ("a", "a\r\n.\r\n"),
        ("a\r\n", "a\r\n.\r\n"),
        (".", "..\r\n.\r\n"),
        ("a\n.\nb\r.c\r\n..d", "a\r\n..\r\nb\r\n..c\r\n...d\r\n.\r\n"),
        ("x.y\r\n\r\n", "x.y\r\n\r\n.\r\n"),
    ])
    func dataIsDotStuffedWithCRLF(message: String, expected: String) throws {
        #expect(try Self.payload(message) == expected)
    }

    @Test func dataRefusesEightBitAndOverlongLines() {
        for message in ["é", "a\0b", String(repeating: "x", count: 999)] {
            #expect {
                try Self.payload(message)
            } throws: { error in
                (error as? SMTPError)?.code == .invalidMessage
            }
        }
        #expect(throws: Never.self) { try Self.payload(String(repeating: "x", count: 998) + "\r\n" + String(repeating: "y", count: 998)) }
    }

    @Test func multiLineRepliesAreAssembled() throws {
        var assembler = SMTPReplyAssembler()
        #expect(try assembler.add(Array("250-smtp.example.com Hello".utf8)) == nil)
        #expect(try assembler.add(Array("250-AUTH PLAIN LOGIN".utf8)) == nil)
        #expect(
            try assembler.add(Array("250 STARTTLS".utf8))
                == SMTPReply(code: 250, lines: ["smtp.example.com Hello", "AUTH PLAIN LOGIN", "STARTTLS"]))
        #expect(
            try assembler.add(Array("535 5.7.8 Authentication credentials invalid".utf8))
                == SMTPReply(code: 535, lines: ["5.7.8 Authentication credentials invalid"]))
        #expect(try assembler.add(Array("220".utf8)) == SMTPReply(code: 220, lines: [""]))
    }

    @Test(arguments: ["hello", "25", "650 no", "250_x", "2x0 x"])
    func malformedReplyLinesAreProtocolViolations(line: String) {
        var assembler = SMTPReplyAssembler()
        #expect {
            _ = try assembler.add(Array(line.utf8))
        } throws: { error in
            (error as? SMTPError)?.code == .protocolViolation && (error as? SMTPError)?.isPermanent == false
        }
    }

    @Test func linesOfAMultiLineReplyMustShareTheirCode() throws {
        var assembler = SMTPReplyAssembler()
        _ = try assembler.add(Array("250-first".utf8))
        #expect(throws: SMTPError.self) { try assembler.add(Array("251 second".utf8)) }
    }

    @Test func extensionsAreReadFromEHLO() {
        let reply = SMTPReply(
            code: 250, lines: ["mx.example.com greets you", "SIZE 1000", "starttls", "AUTH LOGIN CRAM-MD5", "AUTH=PLAIN"])
        let extensions = SMTPExtensions(ehloReply: reply)
        #expect(extensions.startTLS)
        #expect(extensions.authenticationMechanisms == ["LOGIN", "CRAM-MD5", "PLAIN"])
        #expect(!SMTPExtensions(ehloReply: SMTPReply(code: 250, lines: ["STARTTLS is not a keyword on the first line"])).startTLS)
    }

    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("\0user\0pass", "AHVzZXIAcGFzcw==")])
    func base64(input: String, expected: String) {
        #expect(Array(input.utf8).base64 == expected)
    }

    @Test func credentialsAreNeverPrinted() {
        let server = SMTPServer(host: "smtp.example.com", credentials: .init(username: "mailer", password: "hunter2-secret"))
        for text in [String(describing: server), String(reflecting: server), "\(server.credentials!)"] {
            #expect(!text.contains("hunter2-secret"), "\(text)")
        }
        var dumped = ""
        dump(server, to: &dumped)
        #expect(!dumped.contains("hunter2-secret"))
    }

    @Test func credentialsGoInClearOnlyToLoopback() throws {
        let credentials = SMTPServer.Credentials(username: "u", password: "p")
        for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"] {
            #expect(SMTPServer(host: host).isLoopback, "\(host)")
            #expect(throws: Never.self) { try SMTPClient(server: SMTPServer(host: host, security: .none, credentials: credentials)) }
        }
        for host in ["192.0.2.1", "smtp.example.com", "::2", "128.0.0.1", "localhost.example.com"] {
            #expect(!SMTPServer(host: host).isLoopback, "\(host)")
            #expect {
                try SMTPClient(server: SMTPServer(host: host, security: .none, credentials: credentials))
            } throws: { error in
                (error as? SMTPError)?.code == .invalidConfiguration && (error as? SMTPError)?.isPermanent == true
            }
            #expect(throws: Never.self) { try SMTPClient(server: SMTPServer(host: host, security: .none)) }
        }
    }

    @Test func defaultPortsFollowSecurity() {
        #expect(SMTPServer(host: "h").port == 587)
        #expect(SMTPServer(host: "h", security: .tls).port == 465)
        #expect(SMTPServer(host: "h", security: .none).port == 25)
        #expect(SMTPServer(host: "h", port: 2525, security: .tls).port == 2525)
    }

    @Test func anUnreadableCAFileIsAConfigurationError() {
        #expect {
            try SMTPClient(server: SMTPServer(host: "localhost", trust: .certificateAuthorities(pemFile: "/nonexistent/ca.pem")))
        } throws: { error in
            (error as? SMTPError)?.code == .invalidConfiguration
        }
    }

    @Test func invalidEnvelopesAreRefusedBeforeConnecting() async throws {
        // Nothing listens on port 9 of 192.0.2.1 (TEST-NET-1): a connection attempt would time out, not fail at once.
        let client = try SMTPClient(server: SMTPServer(host: "192.0.2.1", port: 9, security: .none))
        for envelope in [
            SMTPEnvelope(sender: "a@example.com", recipients: [], message: []),
            SMTPEnvelope(sender: "a@example.com\r\nRCPT TO:<b@example.com>", recipients: ["c@example.com"], message: []),
            SMTPEnvelope(sender: "a@example.com", recipients: ["<c@example.com>"], message: []),
            SMTPEnvelope(sender: "", recipients: ["c@example.com"], message: Array("héllo".utf8)),
        ] {
            await #expect {
                try await client.send(envelope)
            } throws: { error in
                (error as? SMTPError)?.code == .invalidMessage && (error as? SMTPError)?.step == nil
            }
        }
        await client.shutdown()
    }

    @Test func errorsClassifyPermanence() {
        #expect(SMTPError(code: .rejected, message: "", replyCode: 450).isPermanent == false)
        #expect(SMTPError(code: .rejected, message: "", replyCode: 550).isPermanent)
        #expect(SMTPError(code: .authenticationFailed, message: "", replyCode: 535).isPermanent)
        #expect(SMTPError(code: .authenticationFailed, message: "", replyCode: 454).isPermanent == false)
        #expect(SMTPError(code: .timedOut, message: "").isPermanent == false)
        #expect(SMTPError(code: .tlsFailed, message: "").isPermanent)
        #expect(SMTPError(code: .startTLSUnavailable, message: "").isPermanent)
    }
}
