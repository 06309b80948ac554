import ActionLinks
import Testing

@Suite("Loopback hosts", .timeLimit(.minutes(5)))
struct LoopbackTests {
    @Test(
        "names and addresses of this machine",
        arguments: ["localhost", "LOCALHOST", "::1", "[::1]", "127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1"])
    func loopback(host: String) { #expect(Loopback.isLoopback(host)) }

    @Test(
        "everything else, including names that only start like a loopback address",
        arguments: [
            "", "127.example.com", "127.0.0", "127.0.0.1.2", "127.0.0.256", "128.0.0.1", "localhost.example.com", "10.0.0.1", "::2", "[::1",
            "0.0.0.0", "::ffff:10.0.0.1",
        ])
    func notLoopback(host: String) { #expect(!Loopback.isLoopback(host)) }
}
