import Mustache
import NIOCore
import Synchronization

/// One name a template reads, answered by the view itself: no reflection, no dynamic casts.
package enum PageSlot<View>: Sendable {
    /// Text; `nil` renders nothing and skips `{{#name}}` sections.
    case text(@Sendable (View) -> String?)
    /// A flag for `{{#name}}` / `{{^name}}` sections.
    case flag(@Sendable (View) -> Bool)
}

/// A template of `www/` compiled for one view type: the page as pre-encoded bytes with the view's
/// values in between, written straight into the response buffer.
///
/// The compiled form comes from the template's own Mustache rendering, so every Mustache rule (the
/// standalone-line whitespace rules, partials, inheritance, delimiters, comments, content types)
/// holds exactly as before. Which sections render depends only on which optional values are there
/// and which flags are set (the view's *shape*); for each shape met, the template is rendered once
/// with a marker in place of every value, and the output split at the markers into static bytes and
/// slots (escaped or not, as the template says). Two more renderings, with every value empty and
/// with every value ending in a newline, must give what the compiled form gives; a template whose
/// output depends on the values some other way (a transform such as `{{#empty(name)}}`) fails the
/// check, and that shape is then rendered by Mustache for each request, as before.
package final class CompiledPage<View: Sendable>: Sendable {
    /// What a shape compiled to.
    enum Program: Sendable {
        /// Static bytes and values, in order.
        case pieces([Piece], staticBytes: Int)
        /// Mustache renders it for each request.
        case mustache
    }

    /// A run of the page.
    package enum Piece: Sendable {
        case bytes([UInt8])
        /// The value of a slot, HTML-escaped or as it is.
        case value(slot: Int, escaped: Bool)
    }

    let slots: [PageSlot<View>]
    let names: [String: Int]
    /// Renders with Mustache (the template's own rendering) for a view of names.
    let mustache: @Sendable (any MustacheParent) -> String
    private let programs = Mutex<[UInt64: Program]>([:])

    init(slots: [(String, PageSlot<View>)], mustache: @escaping @Sendable (any MustacheParent) -> String) {
        precondition(slots.count <= 64, "a shape is a 64-bit mask")
        self.slots = slots.map(\.1)
        var names: [String: Int] = [:]
        for (index, (name, _)) in slots.enumerated() where names[name] == nil { names[name] = index }
        self.names = names
        self.mustache = mustache
    }

    /// The values `view` gives its slots, and its shape.
    func read(_ view: View) -> (values: [String?], shape: UInt64) {
        var values = [String?](repeating: nil, count: slots.count)
        var shape: UInt64 = 0
        for (index, slot) in slots.enumerated() {
            switch slot {
            case .text(let read):
                values[index] = read(view)
                if values[index] != nil { shape |= 1 << UInt64(index) }
            case .flag(let read):
                if read(view) { shape |= 1 << UInt64(index) }
            }
        }
        return (values, shape)
    }

    /// Whether `view`'s shape compiled (its values are written as ``HTMLEscaping`` escapes them),
    /// rather than being left to Mustache.
    package func compiles(_ view: View) -> Bool {
        if case .pieces = program(for: read(view).shape) { true } else { false }
    }

    /// The page for `view`, appended to `buffer`.
    func render(_ view: View, into buffer: inout ByteBuffer) {
        let (values, shape) = read(view)
        switch program(for: shape) {
        case .pieces(let pieces, let staticBytes):
            buffer.reserveCapacity(minimumWritableBytes: staticBytes + values.reduce(0) { $0 + ($1?.utf8.count ?? 0) })
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): buffer.writeBytes(bytes)
                case .value(let slot, let escaped):
                    guard let value = values[slot] else { continue }
                    if escaped { HTMLEscaping.write(value, into: &buffer) } else { buffer.writeString(value) }
                }
            }
        case .mustache:
            buffer.writeString(mustache(PageNames(values: ViewValues(values: values, shape: shape), names: names, slots: slots)))
        }
    }

    /// Whether each shape met so far compiled (`true`) or is left to Mustache (`false`).
    var compiledShapes: [Bool] {
        programs.withLock { $0.values.map { if case .pieces = $0 { true } else { false } } }
    }

    func program(for shape: UInt64) -> Program {
        if let program = programs.withLock({ $0[shape] }) { return program }
        let program = compile(shape)
        programs.withLock { $0[shape] = program }
        return program
    }

    /// Renders the shape with markers, splits it, and checks the result against two more renderings.
    func compile(_ shape: UInt64) -> Program {
        let marked = mustache(PageNames(values: ProbeValues(shape: shape, value: PageMarker.text), names: names, slots: slots))
        guard let pieces: [Piece] = PageMarker.split(marked, slots: slots.count) else { return .mustache }
        for probe in ["", "x\n"] {
            let expected = mustache(PageNames(values: ProbeValues(shape: shape, value: { _ in probe }), names: names, slots: slots))
            var rendered = ByteBuffer()
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): rendered.writeBytes(bytes)
                case .value(_, let escaped):
                    if escaped { HTMLEscaping.write(probe, into: &rendered) } else { rendered.writeString(probe) }
                }
            }
            guard rendered.readableBytesView.elementsEqual(expected.utf8) else { return .mustache }
        }
        return .pieces(pieces, staticBytes: pieces.reduce(0) { if case .bytes(let bytes) = $1 { $0 + bytes.count } else { $0 } })
    }
}

/// The marker that stands for a slot in a probe rendering: private-use delimiters around a
/// mixed-case tag (a case transform would show), the slot number, and an `&` that tells an
/// escaped `{{name}}` (`&amp;`) from a raw `{{{name}}}`.
package enum PageMarker {
    static let open = "\u{E000}"
    static let close = "\u{E001}"

    static func text(_ slot: Int) -> String { open + "sL" + String(slot) + "&" + close }

    /// The pieces of a marked rendering, or `nil` when a marker is missing its form.
    package static func split<View>(_ text: String, slots: Int) -> [CompiledPage<View>.Piece]? {
        var pieces: [CompiledPage<View>.Piece] = []
        let bytes = Array(text.utf8)
        let open = Array(Self.open.utf8)
        let close = Array(Self.close.utf8)
        var start = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index...].starts(with: open) else {
                if bytes[index...].starts(with: close) { return nil }
                index += 1
                continue
            }
            if index > start { pieces.append(.bytes(Array(bytes[start..<index]))) }
            var cursor = index + open.count
            guard bytes[cursor...].starts(with: Array("sL".utf8)) else { return nil }
            cursor += 2
            var slot = 0
            let digits = cursor
            while cursor < bytes.count, (0x30...0x39).contains(bytes[cursor]), cursor - digits < 3 {
                slot = slot * 10 + Int(bytes[cursor] - 0x30)
                cursor += 1
            }
            guard cursor > digits, slot < slots else { return nil }
            let escaped: Bool
            if bytes[cursor...].starts(with: Array("&amp;".utf8) + close) {
                escaped = true
                cursor += 5 + close.count
            } else if bytes[cursor...].starts(with: Array("&".utf8) + close) {
                escaped = false
                cursor += 1 + close.count
            } else {
                return nil
            }
            pieces.append(.value(slot: slot, escaped: escaped))
            index = cursor
            start = cursor
        }
        if start < bytes.count { pieces.append(.bytes(Array(bytes[start...]))) }
        return pieces
    }
}

/// Where the names of a page come from: a view's values, or a probe's.
protocol PageValues {
    func text(_ slot: Int) -> String?
    func flag(_ slot: Int) -> Bool
}

/// The values read from a view, with the flags in its shape.
struct ViewValues: PageValues {
    let values: [String?]
    let shape: UInt64
    func text(_ slot: Int) -> String? { values[slot] }
    func flag(_ slot: Int) -> Bool { shape & (1 << UInt64(slot)) != 0 }
}

/// A view of a shape whose texts are `value(slot)`.
struct ProbeValues: PageValues {
    let shape: UInt64
    let value: (Int) -> String
    func text(_ slot: Int) -> String? { shape & (1 << UInt64(slot)) != 0 ? value(slot) : nil }
    func flag(_ slot: Int) -> Bool { shape & (1 << UInt64(slot)) != 0 }
}

/// The names a template reads, for Mustache (when compiling, or for a template it must render).
struct PageNames<View, Values: PageValues>: MustacheParent {
    let values: Values
    let names: [String: Int]
    let slots: [PageSlot<View>]

    func child(named name: String) -> Any? {
        guard let index = names[name] else { return nil }
        switch slots[index] {
        case .text: return values.text(index)
        case .flag: return values.flag(index)
        }
    }
}

/// HTML escaping of values, byte by byte.
enum HTMLEscaping {
    /// Writes `text` with `<`, `>`, `&`, `"` and `'` escaped as Mustache escapes them.
    ///
    /// Mustache compares whole characters, so it leaves a `"` that a combining mark follows (one
    /// character, `"\u{301}`) as it is; this escapes every one of those bytes, which is what an HTML
    /// attribute needs.
    static func write(_ text: String, into buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() {
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "\""): replacement = "&quot;"
                case UInt8(ascii: "'"): replacement = "&#39;"
                default: continue
                }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index]))
                buffer.writeStaticString(replacement)
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
        }
    }
}
