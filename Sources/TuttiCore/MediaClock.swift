/// A source of "now" for code that waits, paces or times out.
///
/// The edge supplies the system clock; tests supply a clock they move by hand. Generic code takes
/// `some MediaClock` (specialized, no existential on the hot path).
public protocol MediaClock: Sendable {
    /// The current time on this clock. Realtime-safe: implementations must be (no lock, no allocation).
    func now() -> HostTime
}
