import Foundation

/// Files and folders only the server's user may open: folders 0700, files 0600.
///
/// Modes are given at creation (`mkdir`, `open` with `O_CREAT`) rather than set afterwards, so a
/// new file is never readable by others, not even for a moment; the process umask can only take
/// bits away from them.
package enum PrivateFiles {
    /// Creates `path` and its missing parents with mode 0700; folders that exist keep their mode.
    package static func makeDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw PrivateFileError(path: prefix, message: "cannot create the folder: \(String(cString: strerror(errno)))")
            }
            prefix += "/"
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw PrivateFileError(path: path, message: "expected a folder")
        }
    }

    /// Creates `path` empty with mode 0600 unless it exists; returns whether it made it.
    @discardableResult
    package static func createFile(_ path: String, contents: Data = Data()) throws -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return false }
            throw PrivateFileError(path: path, message: "cannot create the file: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var written = 0
        while written < contents.count {
            let count = contents[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                throw PrivateFileError(path: path, message: "cannot write the file: \(String(cString: strerror(errno)))")
            }
            written += count
        }
        // A key that vanishes in a power cut would invalidate every link signed with it.
        guard fsync(descriptor) == 0 else {
            throw PrivateFileError(path: path, message: "cannot sync the file: \(String(cString: strerror(errno)))")
        }
        return true
    }

    /// Throws, saying how to fix it, unless `path` (its link followed) is a secret only the server
    /// may change: no one else may write it, and no one else may read it either, but where it lies
    /// on a read-only mount. Cloud Run and Kubernetes mount secrets that way: root-owned, 0444 or
    /// 0644 (Kubernetes' default), reached through `..data` symlinks; nobody can change or replace
    /// them there, and the platform's mount is what keeps them from other workloads.
    package static func requirePrivate(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw PrivateFileError(path: path, message: "cannot read the file's mode: \(String(cString: strerror(errno)))")
        }
        let mode = status.st_mode & 0o777
        if mode & 0o022 != 0 {
            throw PrivateFileError(
                path: path,
                message:
                    "other users may change the file (mode \(String(mode, radix: 8))); a secret must be writable by its owner only: run `chmod go-w \(path)` (a mounted secret: defaultMode 0440 or 0400)"
            )
        }
        if mode & 0o044 != 0, !isReadOnlyMount(path) {
            throw PrivateFileError(
                path: path,
                message:
                    "the file is open to other users (mode \(String(mode, radix: 8))); a secret must be readable by the server's user only: run `chmod 600 \(path)` (a platform's read-only secret mount may be readable by all)"
            )
        }
    }

    /// Whether `path` lies on a file system mounted read-only (a platform's secret volume).
    static func isReadOnlyMount(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Takes the group's and others' permissions away from `path` if it exists.
    package static func restrict(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return }
        guard chmod(path, status.st_mode & 0o700) == 0 else {
            throw PrivateFileError(path: path, message: "cannot make the file private (chmod 600): \(String(cString: strerror(errno)))")
        }
    }
}

/// A file or folder that cannot be created or is not private.
struct PrivateFileError: Error, CustomStringConvertible {
    /// The file or folder.
    let path: String
    /// What is wrong and what to do.
    let message: String
    /// `path: message`.
    var description: String { "\(path): \(message)" }
}
