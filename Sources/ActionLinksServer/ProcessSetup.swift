import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksStores
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a serving process sets once, for the whole process, before it starts: `actionlinks serve`
/// calls ``prepare()`` first thing, and so does the test harness that runs the application in
/// process. Library code changes no process-wide state by itself.
public enum ProcessSetup {
    /// Ignores SIGPIPE, makes glibc return large blocks to the system and caps its arenas; calling
    /// it again does nothing.
    public static func prepare() { _ = once }

    private static let once: Void = {
        // A sendmail command that exits before reading its input must fail the attempt (its
        // write fails with EPIPE), not end the server. Sockets need nothing: NIO sends with
        // MSG_NOSIGNAL.
        _ = signal(SIGPIPE, SIG_IGN)
        returnLargeBlocks()
        capArenas()
    }()

    /// Makes glibc give scrypt's 16 MiB blocks back to the system when a hash is done. By default it
    /// raises its mmap threshold to the size of the first large block freed, and from then on serves
    /// such blocks from its arenas and keeps them: after the first password hash, every thread that
    /// hashed one held 16 MiB more for good. A fixed threshold turns that off.
    private static func returnLargeBlocks() {
        #if canImport(Glibc)
            // mallopt is in <malloc.h>, which the Glibc module leaves out; M_MMAP_THRESHOLD is -3.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let mallopt = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            _ = unsafeBitCast(mallopt, to: Mallopt.self)(-3, 256 * 1024)
        #endif
    }

    /// Caps glibc's malloc arenas at one per core. By default a thread that finds the arenas busy
    /// makes a new one, up to 8 per core, and the server's threads (event loops, Dispatch's workers
    /// for the SQLite connections, password hashes) each end up holding pages of their own arena
    /// that the others cannot reuse: capped, the heap at the peak of `scripts/bench.sh` on 2 cores
    /// was 1-5 MB smaller (16 arenas: 12-16 MB), for no measurable difference in CPU time per
    /// request. An operator's `MALLOC_ARENA_MAX` (or
    /// `glibc.malloc.arena_max` in `GLIBC_TUNABLES`) is left to decide.
    private static func capArenas() {
        #if canImport(Glibc)
            let environment = ProcessInfo.processInfo.environment
            if environment["MALLOC_ARENA_MAX"] != nil || environment["GLIBC_TUNABLES", default: ""].contains("arena_max") { return }
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let mallopt = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            // M_ARENA_MAX is -8.
            let cores = max(1, min(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 64))
            _ = unsafeBitCast(mallopt, to: Mallopt.self)(-8, Int32(cores))
        #endif
    }
}
