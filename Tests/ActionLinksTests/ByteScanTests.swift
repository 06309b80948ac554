import Testing

@testable import ActionLinks

/// The block-at-a-time scanners (``ByteClasses``, ``QueryScan/scan(_:from:)``,
/// ``URLParts/advance(_:from:over:)``) against their byte-at-a-time references, at every length and
/// start offset around a block, so that the overlapping last block and short buffers are covered.
@Suite("Scanning sixteen bytes at a time", .timeLimit(.minutes(5)))
struct ByteScanTests {
    /// Every byte value in every lane of a block stops exactly the scans its class says it should.
    @Test("each class's stops equal the table's, for all 256 byte values in every lane")
    func classesEqualTable() {
        let filler = UInt8(ascii: "a")
        for lane in 0..<ByteClasses.width {
            for value in 0...255 {
                var block = [UInt8](repeating: filler, count: ByteClasses.width)
                block[lane] = UInt8(value)
                block.withUnsafeBufferPointer { bytes in
                    let pointer = bytes.baseAddress!
                    let expectQuery = characterClasses[value] & queryTextClass == 0
                    #expect(ByteClasses.queryStops(pointer) == (expectQuery ? 1 << lane : 0), "query, byte \(value), lane \(lane)")
                    for allowed in [pathClass, userinfoClass, regNameClass] {
                        let expected = characterClasses[value] & allowed == 0
                        #expect(
                            ByteClasses.stops(pointer, outside: allowed) == (expected ? 1 << lane : 0),
                            "class \(allowed), byte \(value), lane \(lane)")
                    }
                }
            }
        }
        #expect(!ByteClasses.handles(queryClass))
    }

    @Test("gathering a byte's low bit from each of eight bytes")
    func gather() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<2_000 {
            let bits = UInt64.random(in: 0...255, using: &rng)
            var word: UInt64 = 0
            for k in 0..<8 where bits & (1 << k) != 0 { word |= 1 << (8 * k) }
            #expect(ByteClasses.gather(word) == bits)
        }
    }

    /// Bytes that make scans interesting: plain text, separators, escapes whole and broken, bytes no
    /// URL may hold, and non-ASCII.
    static let pieces: [[UInt8]] = [
        "a", "Z", "0", "-", "~", "/", "?", ":", "@", "!", "+", "&", "=", "#", "%", "%4", "%41", "%2f", "%C3%A9", "%FF", "%zz",
        "mode", "oobCode", "apiKey", "continueUrl", "lang", "tenantId", "link", "deep_link_id", "%6Dode", " ", "[", "]", "\\",
        "{", "^", "\u{7F}", "é",
    ].map { Array($0.utf8) }

    static func randomBytes(_ rng: inout SplitMix64, length: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < length {
            if Int.random(in: 0..<4, using: &rng) == 0 {
                bytes.append(UInt8.random(in: 0...255, using: &rng))
            } else if Int.random(in: 0..<3, using: &rng) == 0 {
                bytes += pieces.randomElement(using: &rng)!
            } else {
                bytes += Array(repeating: UInt8(ascii: "x"), count: Int.random(in: 1...20, using: &rng))
            }
        }
        return Array(bytes.prefix(length))
    }

    /// Everything a scan records, for comparing two scans.
    static func state(_ scan: QueryScan) -> [String] {
        var state = ["present \(scan.present) repeated \(scan.repeated) escaped \(scan.escaped) high \(scan.escapedHigh)"]
        for name in QueryScan.Name.allCases { state.append("\(name): \(String(describing: scan[name]))") }
        return state
    }

    @Test("the query scan equals the byte-at-a-time scan at every length 0...64 and start", arguments: [1, 2, 3] as [UInt64])
    func queryScanEqualsBytes(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for length in 0...64 {
            for _ in 0..<60 {
                let bytes = Self.randomBytes(&rng, length: length)
                let start = length == 0 ? 0 : Int.random(in: 0...length, using: &rng)
                bytes.withUnsafeBufferPointer { buffer in
                    var wide = QueryScan()
                    var narrow = QueryScan()
                    let end = wide.scan(buffer, from: start)
                    #expect(end == narrow.scanBytes(buffer, from: start), "\(bytes) from \(start)")
                    #expect(Self.state(wide) == Self.state(narrow), "\(bytes) from \(start)")
                }
            }
        }
    }

    @Test("the query scan equals the byte-at-a-time scan on long queries of link-like items")
    func longQueries() {
        var rng = SplitMix64(seed: 7)
        let names = ["mode", "oobCode", "apiKey", "continueUrl", "lang", "tenantId", "link", "deep_link_id", "%6Dode", "x", ""]
        let values = ["signIn", "", "abc%41", "%C3%A9", "%FF", "https%3A%2F%2Fa%2F", "a=b", "%", "x%2"]
        for _ in 0..<500 {
            var query = ""
            for k in 0..<Int.random(in: 0...40, using: &rng) {
                if k > 0 { query += "&" }
                query += names.randomElement(using: &rng)!
                if Int.random(in: 0..<5, using: &rng) > 0 { query += "=" + values.randomElement(using: &rng)! }
            }
            var narrow = QueryScan()
            var wide = QueryScan()
            var copy = query
            copy.withUTF8 { buffer in
                #expect(wide.scan(buffer, from: 0) == narrow.scanBytes(buffer, from: 0), "\(query)")
            }
            #expect(Self.state(wide) == Self.state(narrow), "\(query)")
        }
    }

    @Test("only escapes of bytes outside ASCII mark a value as one that may fail to decode")
    func escapedHigh() {
        func scanned(_ query: String) -> QueryScan {
            var copy = query
            var scan = QueryScan()
            _ = copy.withUTF8 { scan.scan($0, from: 0) }
            return scan
        }
        let plain = scanned("mode=signIn&oobCode=%41%7e&apiKey=K")
        #expect(plain.isEscaped(.oobCode) && !plain.mayFailToDecode(.oobCode) && !plain.isEscaped(.apiKey))
        for high in ["%80", "%9f", "%A0", "%c3%a9", "%FF", "%e6%97%a5"] {
            let scan = scanned("mode=signIn&oobCode=x\(high)y&padding-to-make-it-longer-than-a-block")
            #expect(scan.mayFailToDecode(.oobCode), "\(high)")
        }
        // The last occurrence decides.
        #expect(!scanned("oobCode=%FF&oobCode=%41&padding-padding-padding").mayFailToDecode(.oobCode))
        #expect(scanned("oobCode=%41&oobCode=%FF&padding-padding-padding").mayFailToDecode(.oobCode))
        // An escape in the name does not count for the value.
        #expect(!scanned("%6F%6FbCode=C&padding-padding-padding").mayFailToDecode(.oobCode))
    }

    @Test("advancing over a path, userinfo or host equals the byte-at-a-time advance at every length 0...64")
    func advanceEqualsBytes() {
        var rng = SplitMix64(seed: 9)
        for length in 0...64 {
            for _ in 0..<60 {
                let bytes = Self.randomBytes(&rng, length: length)
                let start = length == 0 ? 0 : Int.random(in: 0...length, using: &rng)
                bytes.withUnsafeBufferPointer { buffer in
                    for allowed in [pathClass, userinfoClass, regNameClass, queryClass] {
                        #expect(
                            URLParts.advance(buffer, from: start, over: allowed)
                                == URLParts.advanceBytes(buffer, from: start, over: allowed),
                            "class \(allowed): \(bytes) from \(start)")
                    }
                }
            }
        }
    }

    /// The splitter reads a lone host without first reading it as userinfo; whatever the authority,
    /// userinfo and host come out as the two-step reading (userinfo up to '@', then the host) has them.
    @Test("authorities: the host read alone equals userinfo-then-host", arguments: [31, 32] as [UInt64])
    func authorities(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let pieces = ["a", "b.c", "-", "%41", "%4", "%", ":", "@", "[", "]", "::1", "80", "/", "?", "#", "&", "=", " ", "é", "\\", "x"]
        var accepted = 0
        for _ in 0..<4_000 {
            var authority = ""
            for _ in 0..<Int.random(in: 0...8, using: &rng) { authority += pieces.randomElement(using: &rng)! }
            let text = "https://" + authority + (Bool.random(using: &rng) ? "/path-long-enough-for-a-block?x=1" : "")
            var copy = text
            copy.withUTF8 { b in
                let start = 8
                var hostStart = start
                var userinfo: Range<Int>?
                let userinfoEnd = URLParts.advanceBytes(b, from: start, over: userinfoClass)
                if userinfoEnd < b.count, b[userinfoEnd] == UInt8(ascii: "@") {
                    userinfo = start..<userinfoEnd
                    hostStart = userinfoEnd + 1
                }
                guard hostStart == b.count || b[hostStart] != UInt8(ascii: "[") else { return }
                let hostEnd = URLParts.advanceBytes(b, from: hostStart, over: regNameClass)
                guard let url = try? URLParts(text) else { return }
                accepted += 1
                #expect(url.userinfoRange == userinfo, "\(text)")
                #expect(url.hostRange == hostStart..<hostEnd, "\(text)")
            }
        }
        #expect(accepted > 400, "enough authorities should split")
    }

    @Test("names are recognised as words wherever they sit and however the buffer ends")
    func namesAsWords() {
        for name in QueryScan.Name.allCases {
            let text = Array(name.text.description.utf8)
            for before in 0..<10 {
                for after in [0, 1, 7, 8] {
                    let bytes =
                        [UInt8](repeating: UInt8(ascii: "x"), count: before) + text + [UInt8](repeating: UInt8(ascii: "="), count: after)
                    bytes.withUnsafeBufferPointer { buffer in
                        let range = before..<(before + text.count)
                        #expect(QueryScan.name(buffer, range, escaped: false) == name, "\(name) at \(before), \(after) after")
                        // One byte off anywhere is no name.
                        for k in range {
                            var changed = bytes
                            changed[k] ^= 0x01
                            changed.withUnsafeBufferPointer { #expect(QueryScan.name($0, range, escaped: false) == nil, "\(changed)") }
                        }
                        // Nor is a name one byte short or long.
                        #expect(QueryScan.name(buffer, before..<(range.upperBound - 1), escaped: false) == nil)
                        if after > 0 { #expect(QueryScan.name(buffer, before..<(range.upperBound + 1), escaped: false) == nil) }
                    }
                }
            }
        }
    }

    @Test("special schemes are recognised as words, in any case, and nothing else is")
    func specialSchemes() {
        var rng = SplitMix64(seed: 41)
        let special: Set<String> = ["https", "http", "file", "wss", "ftp", "ws"]
        let alphabet = Array("hHtTpPsSfFiIlLeEwW+-.0a".utf8)
        var candidates = Array(special) + ["HTTPS", "Http", "FiLe", "WS", "htt", "httpss", "h", "", "ftps", "wss+", "http."]
        for _ in 0..<3_000 {
            candidates.append(
                String(decoding: (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }, as: UTF8.self))
        }
        for scheme in candidates {
            let text = scheme + "://x"
            var copy = text
            copy.withUTF8 { bytes in
                let range = 0..<scheme.utf8.count
                #expect(URLParts.isSpecialScheme(bytes, range) == special.contains(scheme.lowercased()), "\(scheme)")
            }
        }
    }
}
