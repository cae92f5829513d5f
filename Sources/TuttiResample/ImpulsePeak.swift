/// Where an impulse response peaks, to a fraction of a frame: the largest magnitude in `range` of `response`,
/// moved to the vertex of the parabola through it and its two neighbours (not moved at the edges of `response`).
/// nil if `range` is empty or holds only zeros. Used by the calibrations that measure a filter's delay.
/// Allocates nothing. Realtime-safe: yes (but only init calls it).
func interpolatedPeak(of response: [Float], in range: Range<Int>) -> Double? {
    guard let peak = range.max(by: { abs(response[$0]) < abs(response[$1]) }), response[peak] != 0 else {
        return nil
    }
    guard peak > 0, peak + 1 < response.count else { return Double(peak) }
    let before = Double(abs(response[peak - 1]))
    let at = Double(abs(response[peak]))
    let after = Double(abs(response[peak + 1]))
    let curvature = before - 2 * at + after
    return Double(peak) + (curvature < 0 ? 0.5 * (before - after) / curvature : 0)
}
