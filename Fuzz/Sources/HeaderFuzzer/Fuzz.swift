import ActionLinksHeaders

/// The networks every parsed address is also matched against.
enum Fixtures {
    static let networks = ["10.0.0.0/8", "127.0.0.0/8", "::1/128", "2001:db8::/32"].compactMap(IPNetwork.init)
}

/// libFuzzer's entry point for the request-header parsers: the input is split at newlines into
/// header values, and every parser reads every value (and all of them as one multi-line header).
/// A violated invariant traps, which libFuzzer reports as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let values = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }

    for value in values {
        for range in AcceptLanguage.ranges(value) {
            precondition(range.quality > 0 && range.quality <= 1, "quality out of range")
            precondition(range.tag == "*" || range.tag.utf8.first.map { $0 != UInt8(ascii: "-") } == true, "malformed tag")
        }
        _ = AcceptLanguage.best(value) { $0.count == 2 ? $0.lowercased() : nil }

        if let authorization = AuthorizationHeader(value) {
            precondition(!authorization.scheme.isEmpty && !authorization.credentials.isEmpty, "empty scheme or credentials")
            precondition(authorization.scheme == authorization.scheme.lowercased(), "scheme not lower case")
        }
        if let type = MediaType(value) {
            precondition(!type.type.isEmpty && !type.subtype.isEmpty, "empty type")
            precondition(type.matches(type.type.uppercased(), type.subtype), "matching is not case-insensitive")
        }
        if let origin = OriginHeader.parse(value) {
            precondition(!origin.host.isEmpty && (origin.port ?? 0) <= 65535, "bad origin")
        }
        if let address = IPAddress(value) {
            precondition(address.bytes.count == 4 || address.bytes.count == 16, "address length")
            precondition(IPAddress(address.description) == address, "an address does not re-parse from its own text")
            for network in Fixtures.networks where network.contains(address) {
                precondition(address.bytes.count == network.address.bytes.count, "a block contains an address of the other family")
            }
        }
        if let network = IPNetwork(value) {
            precondition(network.contains(network.address), "a block does not contain its own address")
            precondition(IPNetwork(network.description) == network, "a block does not re-parse from its own text")
        }
    }
    precondition(ForwardedHeader.elements(values).count <= 64, "too many forwarded elements")
    precondition(XForwardedFor.addresses(values).count <= 64, "too many forwarded addresses")
    return 0
}

/// libFuzzer's driver; SwiftPM gives every executable its own `main`, so we call the driver from it.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@main
enum FuzzerMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzz))
    }
}

@_silgen_name("exit")
func exit(_ status: CInt) -> Never
