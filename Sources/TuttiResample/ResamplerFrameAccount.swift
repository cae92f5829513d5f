/// The frame accounting that lets a resampler produce exactly the frames a device period asks for while taking
/// its input in steady, period-sized steps.
///
/// libsoxr holds input back: its filters look ahead, and its fixed-ratio engine works in DFT blocks (about
/// 900 output frames at 44.1 ↔ 48 kHz), so the output of one call can be nothing and that of the next a whole
/// block. The account keeps `heldFrames`: the input given so far, counted in output frames (an input frame is
/// worth 1 ÷ ratio of them), minus the output produced. `inputFramesNeeded` asks for just enough input that
/// `leadFrames` are still held after the next `outputFrames` are produced. Once `leadFrames` is at least the
/// most libsoxr ever holds back (`Resampler` measures it at init), every period is complete, and the input
/// taken per period is `outputFrames × ratio` rounded up or down by the carried fraction: never a burst.
///
/// `heldFrames` is also the resampler's latency: the output frames between an input frame's entry and its
/// exit, beyond its position in its own period.
///
/// A plain value with no allocation, so it doubles as an exact model of a `Resampler`'s demand for input: a
/// simulation can run hours of drift compensation through it without resampling audio.
///
/// Realtime-safe: yes. Thread-safe: no (a value; one owner).
package struct ResamplerFrameAccount: Hashable, Sendable {
    /// Output frames the account keeps held after each period: the resampler's steady-state latency.
    package let leadFrames: Double
    /// Input given so far in output frames (input ÷ ratio), minus output produced.
    package private(set) var heldFrames: Double

    /// - Parameters:
    ///   - leadFrames: frames to keep held (≥ 0).
    ///   - heldFrames: frames already held, e.g. after priming the resampler with silence; `leadFrames` if nil.
    package init(leadFrames: Double, heldFrames: Double? = nil) {
        precondition(leadFrames >= 0 && leadFrames.isFinite)
        self.leadFrames = leadFrames
        self.heldFrames = heldFrames ?? leadFrames
    }

    /// Input frames to give so that `frames` output frames can be produced with `leadFrames` still held.
    ///
    /// 0 when enough is already held (e.g. after a caller gave more than asked).
    /// - Parameter ratio: input frames per output frame (> 0) in effect for this period.
    /// Realtime-safe: yes.
    package func inputFramesNeeded(forOutputFrames frames: Int, ratio: Double) -> Int {
        let missing = Double(frames) + leadFrames - heldFrames
        guard missing > 0 else { return 0 }
        return Int((missing * ratio).rounded(.up))
    }

    /// Records one period: `inputFrames` given, `outputFrames` produced, at `ratio` input frames per output frame.
    /// Realtime-safe: yes.
    package mutating func record(inputFrames: Int, outputFrames: Int, ratio: Double) {
        heldFrames += Double(inputFrames) / ratio - Double(outputFrames)
    }
}
