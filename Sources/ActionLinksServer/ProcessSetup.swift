import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a serving process sets once, for the whole process, before it starts: `actionlinks serve`
/// calls ``prepare()`` first thing, and so does the test harness that runs the application in
/// process. Library code changes no process-wide state by itself.
public enum ProcessSetup {
    /// Ignores SIGPIPE and makes glibc return large blocks to the system; calling it again does nothing.
    public static func prepare() { _ = once }

    private static let once: Void = {
        // A sendmail command that exits before reading its input must fail the attempt (its
        // write fails with EPIPE), not end the server. Sockets need nothing: NIO sends with
        // MSG_NOSIGNAL.
        _ = signal(SIGPIPE, SIG_IGN)
        returnLargeBlocks()
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
}
