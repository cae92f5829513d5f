// Big-endian loads and stores at arbitrary (unaligned) offsets, the only byte access the wire code uses.
// Callers check bounds first; these trap on out-of-range offsets like any buffer subscript.

extension UnsafeRawBufferPointer {
    /// Reads a big-endian integer at `offset` (unaligned allowed). Realtime-safe: yes.
    @inlinable
    public func loadBigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count)
        return T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Writes `value` big-endian at `offset` (unaligned allowed). Realtime-safe: yes.
    @inlinable
    public func storeBigEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count)
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }
}
