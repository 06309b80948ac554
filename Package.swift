// swift-tools-version: 6.1

import PackageDescription

let package = Package(
    name: "ActionLinks",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .library(name: "ActionLinks", targets: ["ActionLinks"]),
        .executable(name: "actionlinks", targets: ["actionlinks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Only its EnvironmentVariablesProvider, for the configuration's environment overrides; no
        // default traits (JSON files), so it pulls in nothing but swift-system and swift-collections.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // Runs the tests' commands to their end: its Linux spawn closes inherited descriptors safely, where
        // Foundation's Process.run() in Swift 6.3.1 can crash reading /proc/self/fd (swift-corelibs-foundation
        // #5472). Long-lived children and the sendmail backend use ActionLinksChildProcess.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // The parsing library: no package dependencies and no Foundation, so it stays usable inside an app.
        .target(name: "ActionLinks"),
        // HTTP request-header parsers (Accept-Language, Authorization, Content-Type, Forwarded,
        // X-Forwarded-For, Origin, IP addresses and CIDR blocks): total functions on bytes, no
        // dependencies and no Foundation, so the fuzz package compiles them as they are.
        .target(name: "ActionLinksHeaders"),
        // xmlsec1 (XML signatures over libxml2, OpenSSL back end) and zlib, for SAML (Debian:
        // libxmlsec1-dev, zlib1g-dev): include paths and libraries from pkg-config.
        .systemLibrary(name: "CXMLSec", pkgConfig: "xmlsec1", providers: [.apt(["libxmlsec1-dev", "zlib1g-dev"])]),
        // The few xmlsec calls SAML needs, in C: SwiftPM drops pkg-config's -D flags, so xmlsec's
        // (`pkg-config --cflags xmlsec1` on Debian 12 and 13) are given here, and many of its names
        // are macros that Swift cannot call.
        .target(
            name: "ActionLinksXMLSec", dependencies: ["CXMLSec"],
            cSettings: [
                .define("XMLSEC_CRYPTO_OPENSSL", to: "1"), .define("XMLSEC_NO_CRYPTO_DYNAMIC_LOADING", to: "1"),
                .define("XMLSEC_NO_SIZE_T"), .define("XMLSEC_OPENSSL3_ENGINES", to: "1"), .define("XMLSEC_NO_GOST", to: "1"),
                .define("XMLSEC_NO_GOST2012", to: "1"), .define("__XMLSEC_FUNCTION__", to: "__func__"),
            ]),
        // RS256 signatures by OpenSSL's libcrypto (Debian: libssl-dev, which libxmlsec1-dev already
        // pulls in), for ID tokens: OpenSSL 3 signs RSA-2048 twice as fast as swift-crypto's
        // BoringSSL where the CPU has AVX-512 IFMA, and as fast elsewhere. A few C functions, so
        // that OpenSSL's headers stay out of Swift's module graph.
        .target(name: "ActionLinksOpenSSL", linkerSettings: [.linkedLibrary("crypto")]),
        // SAML 2.0 for a service provider: AuthnRequests (HTTP-Redirect binding) and responses
        // (HTTP-POST binding) checked with xmlsec. Kept out of the library and out of the server.
        .target(name: "ActionLinksSAML", dependencies: ["ActionLinksXMLSec"]),
        // Reads config/actionlinks.yaml into library values; shared by the CLI and (later) the server.
        .target(
            name: "ActionLinksConfiguration",
            dependencies: [
                "ActionLinks", "ActionLinksHeaders", "ActionLinksSAML", .product(name: "Yams", package: "Yams"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // A child process started with posix_spawn (the sendmail backend, the tests' servers): Foundation's
        // `Process.run()` in Swift 6.3.1 can crash the whole process (swift-corelibs-foundation #5472).
        .target(name: "ActionLinksChildProcess"),
        // The hosted link domain in three layers the compiler keeps apart, composed by ActionLinksServer.
        // The domain: services and their rules, the store protocols, security, mail, pages, the upstream
        // client. It names no HTTP server and no concrete store.
        .target(
            name: "ActionLinksDomain",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksHeaders",
                "ActionLinksSAML",
                "ActionLinksOpenSSL",
                "ActionLinksSMTP",
                "ActionLinksChildProcess",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The stores: SQLite (embedded, the default) and PostgreSQL (many instances), behind the domain's protocols.
        .target(
            name: "ActionLinksStores",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksDomain",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the landing page's lookup (SQLite/SQLiteCodeReaders.swift); GRDB's own.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // HTTP: the router, the REST API, the pages' routes, the fast paths, the middlewares. It reaches the
        // stores only through the domain's protocols and capabilities.
        .target(
            name: "ActionLinksHTTP",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksHeaders",
                "ActionLinksDomain",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The composition root: settings to services, stores and routes; the server's lifecycle.
        .target(
            name: "ActionLinksServer",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksDomain",
                "ActionLinksStores",
                "ActionLinksHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Mail out by SMTP: a client on SwiftNIO (STARTTLS or implicit TLS, AUTH PLAIN or LOGIN, a small
        // pool of connections) and the composer of transactional messages (MIME, RFC 2047 headers).
        // No SMTP library is among the packages; errors say whether a retry can help.
        .target(
            name: "ActionLinksSMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libxml2's HTML parser, for links in HTML email (Debian: libxml2-dev).
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Reads emails (MIME, charsets, HTML through libxml2) and explains every link; kept out of the library.
        .target(name: "ActionLinksEmail", dependencies: ["ActionLinks", "CLibXML2"]),
        // The commit a binary was built from, given by the build command as a C macro.
        .target(name: "ActionLinksBuildInfo"),
        .executableTarget(
            name: "actionlinks",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksDomain",
                "ActionLinksServer",
                "ActionLinksEmail",
                "ActionLinksBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The commands' HTTP requests (CommandHTTP.swift); NIOPosix and NIOSSL name their errors.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Links only the library, so a test can prove that the library pulls in no Foundation.
        .executableTarget(name: "ActionLinksLinkageProbe", dependencies: ["ActionLinks"], path: "Tests/LinkageProbe"),
        .testTarget(name: "ActionLinksTests", dependencies: ["ActionLinks"]),
        .testTarget(name: "ActionLinksHeadersTests", dependencies: ["ActionLinksHeaders"]),
        // Reads a test target's `Fixtures/` folder without Foundation.
        .target(name: "ActionLinksFixtures", path: "Tests/ActionLinksFixtures"),
        .testTarget(name: "ActionLinksSAMLTests", dependencies: ["ActionLinksSAML", "ActionLinksFixtures"], exclude: ["Fixtures"]),
        .testTarget(
            name: "ActionLinksConfigurationTests",
            dependencies: ["ActionLinks", "ActionLinksConfiguration", "ActionLinksHeaders", .product(name: "Yams", package: "Yams")]),
        // What the server and command-line tests share: the application in process (router or live
        // socket) with a mailbox, a hand-moved clock and captured logs; the built binary for the
        // end-to-end suites; PostgreSQL clusters, raw sockets and loopback peers; fresh stores; the
        // federated providers (OpenID Connect, SAML) and the Firebase spec helpers.
        .target(
            name: "ActionLinksTestSupport",
            dependencies: [
                "ActionLinks", "ActionLinksChildProcess", "ActionLinksConfiguration", "ActionLinksSAML", "ActionLinksServer",
                "ActionLinksSMTPTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ActionLinksTestSupport"
        ),
        .testTarget(
            name: "ActionLinksServerTests",
            dependencies: [
                "ActionLinksServer", "ActionLinksSAML", "ActionLinksTestSupport", "ActionLinksSMTPTestSupport", "ActionLinksChildProcess",
                "actionlinks",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Yams", package: "Yams"),
            ],
            // What the ported spec cases are and where they come from, for people.
            exclude: ["FirebaseSpecs/README.md"]),
        // Against a real SMTP server: aiosmtpd (Tests/SMTPServer, `bash scripts/smtp-server.sh install`).
        .testTarget(
            name: "ActionLinksSMTPTests",
            dependencies: [
                "ActionLinksSMTP", "ActionLinksSMTPTestSupport", "ActionLinksChildProcess", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]),
        // A real SMTP server for the tests (aiosmtpd, Tests/SMTPServer), started, stopped and
        // restarted on one port, and what it received as Python's email package reads it.
        .target(
            name: "ActionLinksSMTPTestSupport",
            dependencies: [
                "ActionLinksChildProcess",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            path: "Tests/ActionLinksSMTPTestSupport"),
        .testTarget(name: "ActionLinksEmailTests", dependencies: ["ActionLinksEmail", "ActionLinksFixtures"], exclude: ["Fixtures"]),
        .testTarget(
            name: "ActionLinksCLITests",
            dependencies: ["ActionLinksTestSupport", "actionlinks", "ActionLinksLinkageProbe"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
