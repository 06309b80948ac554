/// Names and addresses of this machine: the one check used wherever something is allowed only
/// when it never leaves the machine (a development server, the remembered-device cookie without
/// `Secure`, `/metrics` without credentials, an unencrypted database connection).
public enum Loopback {
    /// Whether `host` names this machine: `localhost` (any case), `::1` or `[::1]`, an IPv4 address
    /// in 127.0.0.0/8 in dotted-decimal form, or such an address mapped into IPv6 (`::ffff:127.0.0.1`).
    /// A name such as `127.example.com` is not loopback.
    public static func isLoopback(_ host: some StringProtocol) -> Bool {
        var host = Substring(host)
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if host.utf8.count == 9, host.lowercased() == "localhost" { return true }
        if host == "::1" { return true }
        if host.lowercased().hasPrefix("::ffff:") { host = host.dropFirst(7) }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.utf8.count <= 3 && part.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && Int(part)! <= 255
        }
    }
}
