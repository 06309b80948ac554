import Foundation

/// An instant, as every store keeps it and as Firebase answers it: whole milliseconds since 1970
/// (UTC). Arithmetic is with `Duration`; Firebase's values in seconds (`validSince`, a token's
/// `exp`, `iat` and `auth_time`) come from ``seconds`` and ``init(seconds:)``, so no code divides
/// or multiplies by 1000 by hand.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970.
    public var milliseconds: Int64

    /// The instant `milliseconds` after 1970.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The instant `seconds` after 1970.
    public init(seconds: Int64) { milliseconds = seconds * 1000 }

    /// The current time.
    public static var now: Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded())) }

    /// Whole seconds since 1970, rounded down (what a JWT's `exp` and Firebase's `validSince` hold).
    public var seconds: Int64 { milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000 }

    /// Seconds since 1970 with their fraction (a JWT's `NumericDate` may have one).
    public var fractionalSeconds: Double { Double(milliseconds) / 1000 }

    /// The instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: fractionalSeconds) }

    /// The milliseconds, in decimal (Firebase's `createdAt` and `lastLoginAt` on the wire).
    public var description: String { String(milliseconds) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

    /// The instant `duration` later (whole milliseconds; a finer part is dropped).
    public static func + (instant: Timestamp, duration: Duration) -> Timestamp {
        Timestamp(milliseconds: instant.milliseconds + duration.wholeMilliseconds)
    }

    /// The instant `duration` earlier.
    public static func - (instant: Timestamp, duration: Duration) -> Timestamp {
        Timestamp(milliseconds: instant.milliseconds - duration.wholeMilliseconds)
    }

    public static func += (instant: inout Timestamp, duration: Duration) { instant = instant + duration }

    /// The time from `b` to `a`.
    public static func - (a: Timestamp, b: Timestamp) -> Duration { .milliseconds(a.milliseconds - b.milliseconds) }
}

extension Duration {
    /// The whole milliseconds in this duration (toward zero).
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// In JSON (a flow's stored details), the milliseconds as a number.
extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(milliseconds: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

extension Timestamp {
    /// The start of the `interval`-long window (counted from 1970) this instant is in: the hour of
    /// a rate limit's count.
    public func roundedDown(to interval: Duration) -> Timestamp {
        let step = interval.wholeMilliseconds
        let rest = milliseconds % step
        return Timestamp(milliseconds: milliseconds - (rest < 0 ? rest + step : rest))
    }

    /// 1970's first instant: a record's times where they are not known (an upstream code's).
    public static let epoch = Timestamp(milliseconds: 0)
}
