// The few arithmetic primitives every Link formula is built from: C `llround` (round half away from zero)
// and Int64 steps that never trap. Internal to TuttiClock.
//
// Link evaluates its formulas in IEEE double and integer microseconds / micro-beats; these helpers keep that
// bit for bit for every realistic value (|values| < 2^52, about 142 years of microseconds) and, for absurd
// values (a hostile peer's timeline, an overflowing sum), saturate at the Int64 bounds instead of trapping,
// so a datagram can never crash the process.

/// Namespace of Link's rounding and saturating integer steps. Realtime-safe: yes. Thread-safe: pure.
enum LinkArithmetic {
    /// `llround`: rounds half away from zero; saturates at the Int64 bounds (NaN gives 0).
    /// Realtime-safe: yes.
    static func round(_ x: Double) -> Int64 {
        let r = x.rounded(.toNearestOrAwayFromZero)
        if r.isNaN { return 0 }
        if r >= 9_223_372_036_854_775_808.0 { return .max }  // 2^63
        if r < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(r)
    }

    /// `a + b`, saturating at the Int64 bounds. Realtime-safe: yes.
    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : r
    }

    /// `a - b`, saturating at the Int64 bounds. Realtime-safe: yes.
    static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : r
    }

    /// `double(a - b)` as Link computes it (integer difference, then converted); when the integer difference
    /// overflows, the difference of the two doubles instead. Realtime-safe: yes.
    static func difference(_ a: Int64, _ b: Int64) -> Double {
        let (r, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? Double(a) - Double(b) : Double(r)
    }
}
