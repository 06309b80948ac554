/// An IPv4 or IPv6 address, parsed strictly (no octal, hex or short IPv4 forms; no zone IDs).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is stored as
    /// its IPv4 address, so both spellings of one client match the same networks.
    public let bytes: [UInt8]

    /// Parses `a.b.c.d` or an RFC 4291 IPv6 text form (`::`, embedded IPv4); `nil` otherwise.
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.count <= 45 else { return nil }
        if let v4 = Self.parseIPv4(utf8[...]) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(utf8[...]) {
            if v6[0..<10].allSatisfy({ $0 == 0 }), v6[10] == 0xFF, v6[11] == 0xFF {
                bytes = Array(v6[12..<16])
            } else {
                bytes = v6
            }
        } else {
            return nil
        }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether this is an IPv4 address (or an IPv4-mapped IPv6 one).
    public var isIPv4: Bool { bytes.count == 4 }

    /// Dotted quad for IPv4; for IPv6 eight lower-case hexadecimal groups with the longest run of
    /// zero groups (two or more) written `::` (RFC 5952).
    public var description: String {
        if isIPv4 { return bytes.map { String($0) }.joined(separator: ".") }
        var groups: [UInt16] = []
        for index in stride(from: 0, to: 16, by: 2) { groups.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])) }
        var best: (start: Int, length: Int) = (-1, 0)
        var index = 0
        while index < 8 {
            if groups[index] == 0 {
                var end = index
                while end < 8, groups[end] == 0 { end += 1 }
                if end - index > best.length { best = (index, end - index) }
                index = end
            } else {
                index += 1
            }
        }
        func hex(_ range: Range<Int>) -> String { groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        guard best.length >= 2 else { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    static func parseIPv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var result: [UInt8] = []
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, result.count < 3 else { return nil }
                result.append(UInt8(value))
                (value, digits, leadingZero) = (0, 0, false)
            } else if (0x30...0x39).contains(byte) {
                guard !leadingZero, digits < 3 else { return nil }
                if digits == 0, byte == UInt8(ascii: "0") { leadingZero = true }
                value = value * 10 + Int(byte - 0x30)
                digits += 1
                guard value <= 255 else { return nil }
            } else {
                return nil
            }
        }
        guard digits > 0, result.count == 3 else { return nil }
        result.append(UInt8(value))
        return result
    }

    static func parseIPv6(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        // Split at "::" (at most once), then each side into groups; the last group may be IPv4.
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var compressed = false
        var sides: [ArraySlice<UInt8>] = [text]
        if let range = firstDoubleColon(text) {
            compressed = true
            sides = [text[text.startIndex..<range], text[(range + 2)...]]
            if firstDoubleColon(sides[1]) != nil { return nil }
        }
        for (side, rest) in sides.enumerated() {
            guard !rest.isEmpty else {
                if !compressed { return nil }
                continue
            }
            let pieces = rest.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            var groups: [UInt16] = []
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, side == sides.count - 1, piece.contains(UInt8(ascii: ".")) {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    groups.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    groups.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard (1...4).contains(piece.count) else { return nil }
                var value: UInt16 = 0
                for byte in piece {
                    guard let digit = hexValue(byte) else { return nil }
                    value = value << 4 | UInt16(digit)
                }
                groups.append(value)
            }
            if side == 0 { head = groups } else { tail = groups }
        }
        let total = head.count + tail.count
        if compressed { guard total <= 7 else { return nil } } else { guard total == 8 else { return nil } }
        let groups = head + Array(repeating: 0, count: 8 - total) + tail
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    static func firstDoubleColon(_ text: ArraySlice<UInt8>) -> Int? {
        var index = text.startIndex
        while index + 1 < text.endIndex {
            if text[index] == UInt8(ascii: ":"), text[index + 1] == UInt8(ascii: ":") { return index }
            index += 1
        }
        return nil
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

/// A block of addresses: `10.0.0.0/8`, `2001:db8::/32`, or one address (`/32` or `/128`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network address (host bits cleared).
    public let address: IPAddress
    /// The prefix length.
    public let prefixLength: Int

    /// Parses `address[/prefix]`; host bits set in the address are cleared.
    public init?(_ cidr: some StringProtocol) {
        let text = String(cidr)
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(parts[1])
            else {
                return nil
            }
            // A mapped address given with an IPv6 prefix (::ffff:10.0.0.0/104) keeps its meaning.
            if address.isIPv4, parts[0].contains(":") { guard value >= 96 else { return nil }; length = value - 96 } else { length = value }
            guard length <= maximum else { return nil }
        }
        prefixLength = length
        self.address = IPAddress(bytes: Self.masked(address.bytes, length))
    }

    /// The block of `prefixLength` bits (at most the address's own length) that holds `address`.
    public init(address: IPAddress, prefixLength: Int) {
        self.prefixLength = max(0, min(prefixLength, address.bytes.count * 8))
        self.address = IPAddress(bytes: Self.masked(address.bytes, self.prefixLength))
    }

    /// Whether `address` is in this block (an IPv4 address is never in an IPv6 block, and the reverse).
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == self.address.bytes.count && Self.masked(address.bytes, prefixLength) == self.address.bytes
    }

    /// `address/prefix`.
    public var description: String { "\(address)/\(prefixLength)" }

    static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        var result = bytes
        for index in result.indices {
            let bits = max(0, min(8, length - index * 8))
            result[index] &= bits == 0 ? 0 : ~UInt8(0) << (8 - bits)
        }
        return result
    }
}
