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
    ],
    targets: [
        // The parsing library: no package dependencies and no Foundation, so it stays usable inside an app.
        .target(name: "ActionLinks"),
        // Reads config/actionlinks.yaml into library values; shared by the CLI and (later) the server.
        .target(
            name: "ActionLinksConfiguration",
            dependencies: ["ActionLinks", .product(name: "Yams", package: "Yams")]
        ),
        // libxml2's HTML parser, for links in HTML email (Debian: libxml2-dev).
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Reads emails (MIME, charsets, HTML through libxml2) and explains every link; kept out of the library.
        .target(name: "ActionLinksEmail", dependencies: ["ActionLinks", "CLibXML2"]),
        .executableTarget(
            name: "actionlinks",
            dependencies: [
                "ActionLinks",
                "ActionLinksConfiguration",
                "ActionLinksEmail",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Links only the library, so a test can prove that the library pulls in no Foundation.
        .executableTarget(name: "ActionLinksLinkageProbe", dependencies: ["ActionLinks"], path: "Tests/LinkageProbe"),
        .testTarget(name: "ActionLinksTests", dependencies: ["ActionLinks"]),
        .testTarget(name: "ActionLinksConfigurationTests", dependencies: ["ActionLinksConfiguration"]),
        .testTarget(name: "ActionLinksEmailTests", dependencies: ["ActionLinksEmail"], exclude: ["Fixtures"]),
        .testTarget(
            name: "ActionLinksCLITests",
            dependencies: ["actionlinks", "ActionLinksLinkageProbe"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
