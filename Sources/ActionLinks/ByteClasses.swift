/// The character classes of ``characterClasses`` worked out sixteen bytes at a time.
///
/// Each function loads 16 bytes (`SIMD16`, which the compiler turns into SSE2 or NEON compares) and
/// returns the lanes that stop a scan as a mask: bit `k` for the byte at offset `k`, so
/// `trailingZeroBitCount` names the first and `mask & (mask - 1)` drops it.
enum ByteClasses {
    /// Bytes per block.
    static let width = 16

    private typealias Lanes = SIMD16<Int8>

    /// The lanes of the 16 bytes at `pointer` that are not plain query text (``queryTextClass``):
    /// `&`, `=`, `%`, `#`, and every byte a query may not hold (controls, space, `"<>[\]^`{|}`,
    /// DEL and bytes outside ASCII).
    ///
    /// The caller guarantees 16 readable bytes at `pointer`.
    @inline(__always)
    static func queryStops(_ pointer: UnsafePointer<UInt8>) -> UInt32 {
        let v = UnsafeRawPointer(pointer).loadUnaligned(as: Lanes.self)
        return lanes(outsideText(v) | equal(v, 0x25) | equal(v, 0x26) | equal(v, 0x3D))
    }

    /// Whether ``stops(_:outside:)`` knows the class `allowed`.
    @inline(__always)
    static func handles(_ allowed: UInt16) -> Bool {
        allowed == pathClass || allowed == userinfoClass || allowed == regNameClass
    }

    /// The lanes of the 16 bytes at `pointer` that end a run of `allowed` (``pathClass``,
    /// ``userinfoClass`` or ``regNameClass``; `nil` for any other class): `%` and every byte outside
    /// the class.
    ///
    /// The caller guarantees 16 readable bytes at `pointer`.
    @inline(__always)
    static func stops(_ pointer: UnsafePointer<UInt8>, outside allowed: UInt16) -> UInt32? {
        let v = UnsafeRawPointer(pointer).loadUnaligned(as: Lanes.self)
        // Each class is the query's text with `&` and `=` added and some of `?/@:` taken away.
        let stops = outsideText(v) | equal(v, 0x25) | equal(v, 0x3F)  // % ?
        switch allowed {
        case pathClass: return lanes(stops)
        case userinfoClass: return lanes(stops | equal(v, 0x2F) | equal(v, 0x40))  // / @
        case regNameClass: return lanes(stops | equal(v, 0x2F) | equal(v, 0x40) | equal(v, 0x3A))  // / @ :
        default: return nil
        }
    }

    /// Lanes (all ones) holding a byte that is in neither a path nor a query, nor one of `%&=?`: all
    /// but `A-Z a-z 0-9 - . _ ~ ! $ ' ( ) * + , ; : @ /` and the four named.
    @inline(__always)
    private static func outsideText(_ v: Lanes) -> Lanes {
        // Signed, every byte outside ASCII is negative: one compare finds them with the controls and space.
        var stops = less(v, 0x21) | equal(v, 0x7F)
        stops |= equal(v & Lanes(repeating: -2), 0x22)  // " #
        stops |= equal(v, 0x3C) | equal(v, 0x3E)  // < >
        let folded = v & Lanes(repeating: ~0x20)  // [ \ ] and { | } alike
        stops |= equal(folded, 0x5B) | equal(folded, 0x5C) | equal(folded, 0x5D)
        return stops | equal(v, 0x5E) | equal(v, 0x60)  // ^ `
    }

    @inline(__always)
    private static func equal(_ v: Lanes, _ byte: Int8) -> Lanes { unsafeBitCast(v .== Lanes(repeating: byte), to: Lanes.self) }

    @inline(__always)
    private static func less(_ v: Lanes, _ byte: Int8) -> Lanes { unsafeBitCast(v .< Lanes(repeating: byte), to: Lanes.self) }

    /// The lanes as a mask, bit `k` for lane `k` (SSE2's `pmovmskb`, which Swift does not expose).
    @inline(__always)
    private static func lanes(_ stops: Lanes) -> UInt32 {
        let words = unsafeBitCast(stops, to: SIMD2<UInt64>.self) & SIMD2(repeating: 0x0101_0101_0101_0101)
        return UInt32(truncatingIfNeeded: gather(words[0]) | gather(words[1]) &<< 8)
    }

    /// The low bits of the eight bytes of `word` (each 0 or 1) as eight bits: byte `k` lands in bit
    /// `56 + k` of the product and nothing carries into those bits (each sum has one term).
    @inline(__always)
    static func gather(_ word: UInt64) -> UInt64 {
        (word &* 0x0102_0408_1020_4080) &>> 56
    }
}
