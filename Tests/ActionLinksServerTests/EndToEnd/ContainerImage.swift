import ActionLinksChildProcess
import ActionLinksSMTPTestSupport
import ActionLinksTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The container image `bash scripts/image.sh` built (its name in `ACTIONLINKS_IMAGE`), in podman's
/// vfs store where that script puts it, and what its configuration says it runs.
///
/// No container runtime works in the sandboxes the tests run in, so the image is booted the way a
/// runtime would boot it, by hand: its file system mounted, /proc in it, the entrypoint started by
/// `chroot` as the image's user with the image's environment.
struct ContainerImage {
    static let variable = "ACTIONLINKS_IMAGE"

    let name: String
    /// `User`, as `uid:gid`.
    let user: String
    let workingDirectory: String
    let entrypoint: [String]
    let environment: [String: String]
    let exposedPorts: Set<String>
    let labels: [String: String]

    /// The image named in `ACTIONLINKS_IMAGE`, as `podman image inspect` describes it.
    static func underTest() async throws -> ContainerImage {
        guard getuid() == 0 else {
            throw TestSupportError("the image test mounts the image's file system and starts its entrypoint with chroot: run it as root")
        }
        guard let name = ProcessInfo.processInfo.environment[variable], !name.isEmpty else { throw MissingTestImage() }
        let text = try await podman(["image", "inspect", name])
        let inspected = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]]
        guard let config = inspected?.first?["Config"] as? [String: Any] else {
            throw TestSupportError("podman image inspect \(name) printed no Config: \(text)")
        }
        var environment: [String: String] = [:]
        for entry in config["Env"] as? [String] ?? [] {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            environment[String(parts[0])] = parts.count == 2 ? String(parts[1]) : ""
        }
        return ContainerImage(
            name: name, user: config["User"] as? String ?? "", workingDirectory: config["WorkingDir"] as? String ?? "",
            entrypoint: config["Entrypoint"] as? [String] ?? [], environment: environment,
            exposedPorts: Set((config["ExposedPorts"] as? [String: Any] ?? [:]).keys), labels: config["Labels"] as? [String: String] ?? [:])
    }

    /// Runs `body` with the root of a new container of this image, /proc mounted in it, and removes
    /// the container afterwards, whatever happened. A container, not the image itself: with vfs,
    /// `podman image mount` is the image's own layer, which would keep the keys and the database
    /// the server writes.
    func withContainerFileSystem<T>(_ body: (URL) async throws -> T) async throws -> T {
        let container = try await Self.podman(["create", "--name", "actionlinks-image-test-\(UUID().uuidString.prefix(8))", name])
        var mountedProc: URL?
        do {
            let root = URL(fileURLWithPath: try await Self.podman(["mount", container]))
            let proc = root.appendingPathComponent("proc")
            try FileManager.default.createDirectory(at: proc, withIntermediateDirectories: true)
            try await Self.run(["mount", "-t", "proc", "proc", proc.path])
            mountedProc = proc
            let result = try await body(root)
            try await Self.remove(container, mountedProc: mountedProc)
            return result
        } catch {
            try? await Self.remove(container, mountedProc: mountedProc)
            throw error
        }
    }

    /// Every step is tried, whichever fails: one left behind must not keep the others behind too.
    private static func remove(_ container: String, mountedProc: URL?) async throws {
        var steps = [podmanOnStore + ["umount", container], podmanOnStore + ["rm", container]]
        if let mountedProc { steps.insert(["umount", mountedProc.path], at: 0) }
        var failure: (any Error)?
        for step in steps {
            do { try await run(step) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// podman on the vfs store scripts/image.sh builds into.
    private static let podmanOnStore = ["podman", "--storage-driver", "vfs"]

    /// Runs podman on that store; returns what it printed, trimmed.
    @discardableResult
    private static func podman(_ arguments: [String]) async throws -> String {
        try await run(podmanOnStore + arguments)
    }

    @discardableResult
    private static func run(_ arguments: [String]) async throws -> String {
        let result = try await Command.run(program: URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else {
            throw TestSupportError("\(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// `ACTIONLINKS_IMAGE` is not set: the image is built apart from the tests (`bash .ci/run` builds it
/// and runs them with its name).
struct MissingTestImage: Error, CustomStringConvertible {
    var description: String {
        "\(ContainerImage.variable) is not set: build the image with `bash scripts/image.sh` and run the tests with "
            + "\(ContainerImage.variable) set to the name it prints last (`bash .ci/run` does both)"
    }
}

/// An image's entrypoint running in a container's file system (``ContainerImage/withContainerFileSystem(_:)``)
/// as the image's user, through `chroot`, its output collected in files outside that file system.
final class ChrootedEntrypoint {
    let process = ChildProcess()
    private let output: URL
    private let errors: URL

    init(image: ContainerImage, root: URL, environment: [String: String]) throws {
        let logs = TestProject.temporaryDirectory("actionlinks-image")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        output = logs.appendingPathComponent("stdout")
        errors = logs.appendingPathComponent("stderr")
        for file in [output, errors] { FileManager.default.createFile(atPath: file.path, contents: nil) }
        // chroot starts the program in the new root's `/`, where a runtime would start it in the
        // image's WORKDIR: the image's environment names every path absolutely, so nothing differs.
        // By its path: the image's environment is all the process gets, and it may have no PATH.
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/chroot")
        process.arguments = ["--userspec=\(image.user)", root.path] + image.entrypoint
        process.environment = environment
        process.standardOutput = .file(try FileHandle(forWritingTo: output))
        process.standardError = .file(try FileHandle(forWritingTo: errors))
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.kill(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Everything it wrote to standard output (the `log` mail backend's messages).
    var standardOutput: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
    /// Everything it logged.
    var standardError: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
}
