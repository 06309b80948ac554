import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import Foundation

/// nginx in front of instances on loopback, as a deployment puts a proxy in front of them: the
/// usual `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` (which appends the client's
/// address to whatever the client sent) and `X-Forwarded-Proto $scheme`, round robin over the
/// instances. A request with `X-Test-Instance: <index>` goes to that instance only, and every answer
/// says which instance gave it (`X-Upstream`), so a test can pin a step to one instance.
public final class NginxProxy: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let base: String
    let directory: URL
    let process: ChildProcess

    /// Starts nginx on a free loopback port in front of `upstreams` (`127.0.0.1:<port>` each).
    public init(upstreams: [String]) throws {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSupportError("nginx is not installed: run `bash scripts/install-test-dependencies.sh` (Debian: nginx-light)")
        }
        directory = TestProject.temporaryDirectory("actionlinks-nginx")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try LoopbackPort.free()
        base = "http://127.0.0.1:\(port)"
        let pinned = upstreams.enumerated().map { "        \($0.offset) \($0.element);" }.joined(separator: "\n")
        let path = directory.path
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 512; }
            http {
                access_log off;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                upstream instances {
            \(upstreams.map { "        server \($0);" }.joined(separator: "\n"))
                }
                map $http_x_test_instance $instance {
                    default instances;
            \(pinned)
                }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://$instance;
                        proxy_http_version 1.1;
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        add_header X-Upstream $upstream_addr always;
                    }
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", path, "-c", file.path]
        process.standardOutput = .nullDevice
        process.standardError = .nullDevice
        try process.run()
    }

    /// Waits until nginx answers (a hang guard, not a bound).
    public func started() async throws {
        try await Eventually.wait(for: "nginx to listen on \(base)") {
            (try? await CurlClient(base: self.base, source: "127.0.0.1").request("GET", "/healthz").status) == 200
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A client that connects from a chosen loopback address (`curl --interface`): behind a proxy on
/// this machine, each address is another client, as far as the proxy can tell.
public struct CurlClient: LinkDomainClient {
    /// What every path is appended to.
    public let base: String
    /// The local address the connection comes from (any of 127.0.0.0/8).
    public let source: String

    public init(base: String, source: String) {
        self.base = base
        self.source = source
    }

    public func request(_ method: String, _ path: String, body: Data?, headers: [String: String]) async throws -> HTTPReply {
        let folder = TestProject.temporaryDirectory("actionlinks-curl")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let head = folder.appendingPathComponent("head"), content = folder.appendingPathComponent("body")
        var arguments = [
            "curl", "-s", "--max-time", "120", "--interface", source, "-X", method, "-D", head.path, "-o", content.path, "-H", "Expect:",
        ]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            let file = folder.appendingPathComponent("request")
            try body.write(to: file)
            arguments += ["--data-binary", "@" + file.path]
        }
        arguments.append(base + path)
        let result = try await Command.run(program: URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else { throw TestSupportError("curl \(method) \(path) from \(source): \(result.status) \(result.stderr)") }
        let lines = try String(contentsOf: head, encoding: .utf8).components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw TestSupportError("curl: no status line in \(lines)")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased().split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(
                separator: "-")
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { $0 + ", " + value } ?? value
        }
        return HTTPReply(status: status, headers: fields, body: (try? Data(contentsOf: content)) ?? Data())
    }
}

/// A secret mounted as Kubernetes mounts one: a read-only mount whose files are links through
/// `..data` to a timestamped folder, readable by all (mode 0644, the default `defaultMode`), owned
/// by root; ``update(_:)`` swaps `..data` to a new folder as the kubelet does when the secret
/// changes. Needs root (it mounts).
public final class MountedSecret: Sendable {
    /// The mounted folder the server reads (read-only).
    public let mount: URL
    /// The writable folder behind the mount (what the kubelet writes).
    public let source: URL
    /// The one file's name.
    public let name: String

    /// `name` with `contents`, mounted read-only.
    public init(name: String, contents: Data) async throws {
        guard getuid() == 0 else { throw TestSupportError("mounting a secret needs root (the tests run as root in CI)") }
        let root = TestProject.temporaryDirectory("actionlinks-secret")
        source = root.appendingPathComponent("volume")
        mount = root.appendingPathComponent("mounted")
        self.name = name
        for folder in [source, mount] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try write(contents, version: 1)
        try FileManager.default.createSymbolicLink(
            atPath: source.appendingPathComponent(name).path, withDestinationPath: "..data/" + name)
        for arguments in [["--bind", source.path, mount.path], ["-o", "remount,bind,ro", mount.path]] {
            let result = try await Command.run(program: URL(fileURLWithPath: "/bin/mount"), arguments)
            guard result.status == 0 else { throw TestSupportError("mount \(arguments): \(result.stderr)") }
        }
    }

    /// The file's path in the mount.
    public var path: String { mount.appendingPathComponent(name).path }

    /// A new version of the file: a new folder, then `..data` swapped to it in one rename.
    public func update(_ contents: Data) throws {
        let versions = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasPrefix("..20") }
        try write(contents, version: versions.count + 1)
    }

    private func write(_ contents: Data, version: Int) throws {
        let folderName = "..2026_12_07_00_00_0\(version).\(UUID().uuidString.prefix(6))"
        let folder = source.appendingPathComponent(folderName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let file = folder.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: file.path, contents: contents, attributes: [.posixPermissions: 0o644]) else {
            throw TestSupportError("cannot write \(file.path)")
        }
        let link = source.appendingPathComponent("..data_tmp")
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: folderName)
        guard rename(link.path, source.appendingPathComponent("..data").path) == 0 else {
            throw TestSupportError("cannot swap ..data: \(String(cString: strerror(errno)))")
        }
    }

    /// Unmounts and removes everything.
    public func remove() async {
        _ = try? await Command.run(program: URL(fileURLWithPath: "/bin/umount"), [mount.path])
        try? FileManager.default.removeItem(at: mount.deletingLastPathComponent())
    }
}
