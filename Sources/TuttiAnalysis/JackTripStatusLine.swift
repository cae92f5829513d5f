// One line of JackTrip 1.7's `-I` status output, as the lab benchmark reads it.

/// `DATE PEER send: U/O recv: U/O prot: A/B/C tot: N …`: JackTrip's cumulative counters, as printed (recv
/// U/O: receive-side ring buffer underruns/overflows as JackTrip counts them; tot: packets received).
///
/// Thread-safe: a value; `init?(_:)` is a pure function any thread may call.
public struct JackTripStatusLine: Hashable, Sendable {
    public var send: [Int]
    public var receive: [Int]
    public var protocolCounters: [Int]
    public var total: Int

    /// Parses a line; `nil` for any other line (or a malformed one).
    public init?(_ line: Substring) {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        func field(_ name: String) -> Substring? {
            guard let index = parts.firstIndex(where: { $0 == name }), index + 1 < parts.endIndex else { return nil }
            return parts[index + 1]
        }
        func counters(_ name: String) -> [Int]? {
            guard let text = field(name) else { return nil }
            let values = text.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
            return values.contains(nil) ? nil : values.compactMap { $0 }
        }
        guard let send = counters("send:"), let receive = counters("recv:"), let prot = counters("prot:"),
            let totalText = field("tot:"), let total = Int(totalText), send.count >= 1, receive.count >= 2
        else { return nil }
        self.send = send
        self.receive = receive
        self.protocolCounters = prot
        self.total = total
    }
}
