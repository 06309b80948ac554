import ActionLinksBuildInfo

/// What `actionlinks --version` prints: the release (CHANGELOG.md) and the commit it was built from.
enum Version {
    /// The release this source tree is.
    static let release = "0.1.0"
    /// The commit, as the build was told it (`unknown` for a plain `swift build`).
    static let commit = String(cString: actionlinks_build_commit())
    /// `0.1.0 (commit 1a2b3c4)`.
    static let text = "\(release) (commit \(commit))"
}
