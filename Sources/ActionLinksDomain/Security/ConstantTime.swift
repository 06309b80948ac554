/// Equality whose time does not depend on where the inputs differ.
@usableFromInline
package enum ConstantTime {
    /// Inlinable, so each caller's module specializes it for its collections: called unspecialized
    /// from another target (the API key's check on every landing page), its loop went through the
    /// protocols' witnesses byte by byte and cost the page about 5% of its CPU.
    @inlinable
    package static func equal<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
