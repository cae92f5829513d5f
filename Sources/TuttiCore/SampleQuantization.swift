/// Float ↔ integer sample conversion shared by the wire codec and file writers, so a sample written to a
/// 24-bit WAV equals the one sent as L24.
public enum SampleQuantization {
    /// Rounds `sample * scale` to the nearest integer (ties to even), clamped to [-scale, maximum]; NaN is 0.
    /// Realtime-safe: yes.
    @inlinable
    public static func integer(_ sample: Float, scale: Float, maximum: Int32) -> Int32 {
        guard sample == sample else { return 0 }
        let scaled = (sample * scale).rounded(.toNearestOrEven)
        if scaled >= Float(maximum) { return maximum }
        if scaled <= -scale { return Int32(-scale) }
        return Int32(scaled)
    }
}
