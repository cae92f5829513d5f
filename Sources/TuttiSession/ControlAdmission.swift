import TuttiCore
import TuttiWire

/// Who may open a control connection and send a request, so that no stranger on the LAN can exhaust a peer's
/// control channel (issue 14): at most `limits.connections` open connections, `limits.connectionsPerSource`
/// from one address, and a token bucket per address that each new connection and each request draws one
/// token from (`limits.requestsPerSecond`, up to `limits.burst` saved). What is turned away is counted by
/// reason in `counters`.
///
/// The addresses it tracks are bounded: an address without open connections whose bucket has refilled
/// is forgotten once more than `limits.trackedSources` are known; a new address beyond that is turned away.
///
/// Pure value: time comes in as `now`. Thread-safe: no (the control server keeps it behind a mutex).
package struct ControlAdmission: Sendable {
    package let limits: ControlLimits
    package private(set) var counters = ControlRefusals()
    /// Open connections now, from every address.
    package private(set) var openConnections = 0

    private struct Source {
        var open = 0
        var tokens: Double
        var refilled: HostTime
    }
    private var sources: [String: Source] = [:]

    package init(limits: ControlLimits) {
        self.limits = limits
    }

    /// Why a connection or a request was turned away.
    package enum Refusal: Hashable, Sendable {
        /// Every one of the peer's control connections is open.
        case full
        /// This address has all the connections it may have open.
        case tooManyFromSource
        /// This address sent more than its rate.
        case rateLimited
        /// The peer tracks as many addresses as it may.
        case tooManySources

        /// One line for the client (a `.busy` failure) and the log.
        package func message(source: String, limits: ControlLimits) -> String {
            switch self {
            case .full: "this peer has \(limits.connections) control connections open, the most it takes; try again in a moment"
            case .tooManyFromSource:
                "\(source) has \(limits.connectionsPerSource) control connections open to this peer, the most one address may; close some first"
            case .rateLimited:
                "\(source) sent more than \(Self.formatted(limits.requestsPerSecond)) control requests a second to this peer; slow down and try again"
            case .tooManySources: "this peer hears from \(limits.trackedSources) addresses, the most it tracks; try again in a moment"
            }
        }

        private static func formatted(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
    }

    /// A connection from `source` was accepted by the socket: admits it (`nil`; call `closed(source:)` when it
    /// ends) or says why it must be closed at once (counted).
    package mutating func opened(source: String, now: HostTime) -> Refusal? {
        if openConnections >= limits.connections { return refuse(.full) }
        guard var entry = entry(for: source, now: now) else { return refuse(.tooManySources) }
        if entry.open >= limits.connectionsPerSource { return refuse(.tooManyFromSource) }
        guard entry.tokens >= 1 else {
            sources[source] = entry
            return refuse(.rateLimited)
        }
        entry.tokens -= 1
        entry.open += 1
        sources[source] = entry
        openConnections += 1
        return nil
    }

    /// An admitted connection from `source` ended.
    package mutating func closed(source: String) {
        guard var entry = sources[source], entry.open > 0 else { return }
        entry.open -= 1
        sources[source] = entry
        openConnections -= 1
    }

    /// A request arrived on an admitted connection from `source`: whether it may be handled (one token), or
    /// why not (counted).
    package mutating func request(from source: String, now: HostTime) -> Refusal? {
        guard var entry = entry(for: source, now: now) else { return refuse(.tooManySources) }
        guard entry.tokens >= 1 else {
            sources[source] = entry
            return refuse(.rateLimited)
        }
        entry.tokens -= 1
        sources[source] = entry
        return nil
    }

    /// A connection was closed because no whole request came within `limits.requestTimeout`.
    package mutating func timedOut() { counters.timedOut &+= 1 }

    /// A request was malformed (or its frame too large); the connection is closed.
    package mutating func malformed() { counters.malformed &+= 1 }

    /// A client that is not a member of a members-only session was turned away.
    package mutating func notMember() { counters.notMembers = (counters.notMembers ?? 0) &+ 1 }

    /// A member's request was refused as beyond its rights, or a transport message failed to open.
    package mutating func forbidden() { counters.forbidden = (counters.forbidden ?? 0) &+ 1 }

    /// How many addresses are tracked now.
    package var trackedSources: Int { sources.count }

    /// `source`'s entry with its bucket refilled to `now`, a new one (full bucket) when there is room, or nil.
    private mutating func entry(for source: String, now: HostTime) -> Source? {
        if var entry = sources[source] {
            let elapsed = max(0, (now - entry.refilled).seconds)
            entry.tokens = min(limits.burst, entry.tokens + elapsed * limits.requestsPerSecond)
            entry.refilled = now
            return entry
        }
        if sources.count >= limits.trackedSources { forgetIdleSources(now: now) }
        guard sources.count < limits.trackedSources else { return nil }
        return Source(open: 0, tokens: limits.burst, refilled: now)
    }

    /// Forgets the addresses with no connection open whose bucket would be full by `now` (they lose nothing).
    private mutating func forgetIdleSources(now: HostTime) {
        sources = sources.filter { _, entry in
            entry.open > 0 || entry.tokens + max(0, (now - entry.refilled).seconds) * limits.requestsPerSecond < limits.burst
        }
    }

    private mutating func refuse(_ refusal: Refusal) -> Refusal {
        switch refusal {
        case .full, .tooManyFromSource, .tooManySources: counters.connectionsRefused &+= 1
        case .rateLimited: counters.rateLimited &+= 1
        }
        return refusal
    }
}
