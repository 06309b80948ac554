// swift-tools-version: 6.1

// package-benchmark suites, kept out of the main package so its tests stay lean. The library is
// compiled from the same sources (Sources/ActionLinks is a symlink; it has no dependencies), and so is the
// email reader (Sources/ActionLinksEmail, Sources/CLibXML2: libxml2-dev).
//
//   cd Benchmarks && swift package --disable-sandbox benchmark

import PackageDescription

let package = Package(
    name: "ActionLinksBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: [])
    ],
    targets: [
        .target(name: "ActionLinks"),
        .executableTarget(
            name: "LinkParsing",
            dependencies: ["ActionLinks", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/LinkParsing",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .target(name: "ActionLinksEmail", dependencies: ["ActionLinks", "CLibXML2"]),
        .executableTarget(
            name: "EmailInspection",
            dependencies: ["ActionLinksEmail", "CLibXML2", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/EmailInspection",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "Association",
            dependencies: ["ActionLinks", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/Association",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
