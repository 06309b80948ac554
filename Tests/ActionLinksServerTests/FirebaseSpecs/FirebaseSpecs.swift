import Testing

/// Firebase's Auth emulator specs (firebase-tools `src/emulator/auth/*.spec.ts`) ported to this
/// server, one suite per spec file, each test named by the spec's case
/// (`swift test --filter FirebaseSpecs`); `README.md` here lists what was ported, what was not and
/// where this server answers differently. The spec helpers (``Spec``, `registerUser`, ...) are in
/// ActionLinksTestSupport's `FirebaseSpecHelpers.swift`.
///
/// Nearly every case hashes passwords with the server's scrypt (16 MiB, a good part of a core
/// each), so the cases run one at a time: in parallel on a two-core machine they starve the
/// live-socket suites that run beside them past their clients' timeouts.
@Suite("Firebase's Auth emulator specs", .serialized, .timeLimit(.minutes(5)))
enum FirebaseSpecs {}
