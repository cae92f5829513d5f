/// Float ↔ integer sample conversion shared by the wire codec and file writers, so a sample written to a
/// 24-bit WAV equals the one sent as L24.
public enum SampleQuantization {
    /// Rounds `sample * scale` to the nearest integer (ties to even), clamped to [-scale, maximum]; NaN is 0.
    /// Realtime-safe: yes.
    ///
    /// Rounds by adding and subtracting 1.5 · 2⁵² in `Double` (whose spacing there is 1, so the sum rounds to the
    /// nearest integer, ties to even, in the default rounding mode): the same result as
    /// `rounded(.toNearestOrEven)` for every `Float` times a power-of-two `scale`, without the `rintf` call the
    /// baseline x86-64 target makes of that (no SSE4.1 `roundss`), so a packet's loop stays inline.
    @inlinable
    public static func integer(_ sample: Float, scale: Float, maximum: Int32) -> Int32 {
        guard sample == sample else { return 0 }
        let roundingShift = 6_755_399_441_055_744.0  // 1.5 · 2⁵²
        let scaled = (Double(sample) * Double(scale) + roundingShift) - roundingShift
        if scaled >= Double(maximum) { return maximum }
        if scaled <= -Double(scale) { return Int32(-scale) }
        return Int32(scaled)
    }
}
