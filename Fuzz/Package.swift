// swift-tools-version: 6.1

// The libFuzzer target, kept out of the main package so that `swift build` and `swift test` there
// never try to link an executable without `main`. It compiles the library from the same sources
// (Sources/ActionLinks is a symlink), which works because the library has no dependencies.
//
//   cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address --product ActionLinksFuzzer
//   mkdir -p corpus-run && cp corpus/* corpus-run/
//   .build/release/ActionLinksFuzzer corpus-run -max_total_time=600
//
// EmailFuzzer does the same for the email path (MIME, charsets, HTML through libxml2, rewriters):
//
//   swift build -c release -Xswiftc -sanitize=fuzzer,address --product EmailFuzzer
//   mkdir -p corpus-email-run && cp corpus-email/* corpus-email-run/
//   .build/release/EmailFuzzer corpus-email-run -max_total_time=600
//
// HeaderFuzzer does the same for the request-header parsers (Sources/ActionLinksHeaders):
//
//   swift build -c release -Xswiftc -sanitize=fuzzer,address --product HeaderFuzzer
//   mkdir -p corpus-headers-run && cp corpus-headers/* corpus-headers-run/
//   .build/release/HeaderFuzzer corpus-headers-run -max_total_time=600

import PackageDescription

let package = Package(
    name: "ActionLinksFuzz",
    targets: [
        .target(name: "ActionLinks"),
        .executableTarget(
            name: "ActionLinksFuzzer",
            dependencies: ["ActionLinks"]
        ),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .target(name: "ActionLinksEmail", dependencies: ["ActionLinks", "CLibXML2"]),
        .executableTarget(name: "EmailFuzzer", dependencies: ["ActionLinksEmail"]),
        .target(name: "ActionLinksHeaders"),
        .executableTarget(name: "HeaderFuzzer", dependencies: ["ActionLinksHeaders"]),
    ],
    swiftLanguageModes: [.v6]
)
