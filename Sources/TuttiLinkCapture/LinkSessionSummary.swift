// Which Link session survived a capture: per sender NodeId its first and last announcements, the sessions
// founded, and the sessions the nodes still talking at the end announced last (`tutti-link-pcap sessions`,
// scenario 3 of scripts/link/tutti-link-test).

import TuttiClock

/// What a capture of Link discovery traffic (ALIVE, RESPONSE, BYEBYE) shows about session founding and
/// convergence. Encoded with the snake-case keys the Link lab scripts read (a missing figure is left out);
/// times are seconds from the first node's first message, rounded to the microsecond.
///
/// Thread-safe: a value; `init(messages:)` is a pure function any thread may call.
package struct LinkSessionSummary: Equatable, Sendable, Encodable {
    /// One sender NodeId in the capture.
    package struct Node: Equatable, Sendable, Encodable {
        /// The NodeId, 16 hex digits.
        package var node: String
        /// Its address (the IPv4 one when it sent from both families).
        package var src: String
        package var firstT: Double
        package var lastT: Double
        package var msgs: Int
        /// The type of its last message: `ALIVE`, `RESPONSE` or `BYEBYE`.
        package var lastType: String
        /// The sessions (16 hex digits) and tempos (bpm) it announced first and last; `nil` when it never
        /// announced state.
        package var firstSess: String?
        package var firstTempo: Double?
        package var lastSess: String?
        package var lastTempo: Double?
        /// Since when it has been announcing its last session.
        package var sessSinceT: Double?

        enum CodingKeys: String, CodingKey {
            case node, src, msgs
            case firstT = "first_t"
            case lastT = "last_t"
            case lastType = "last_type"
            case firstSess = "first_sess"
            case firstTempo = "first_tempo"
            case lastSess = "last_sess"
            case lastTempo = "last_tempo"
            case sessSinceT = "sess_since_t"
        }
    }

    /// Every node, in the order of its first message.
    package var nodes: [Node]
    /// Sessions founded in the capture (a node whose first announced session is its own NodeId), sorted.
    package var foundedSessions: [String]
    /// The smallest founded session (unsigned big-endian, as Link compares them).
    package var smallestFounded: String?
    /// Seconds between the first messages of the first and the last founder (`nil` with fewer than two).
    package var founderGapS: Double?
    /// The first founder's session.
    package var olderFounderSession: String?
    /// The sessions last announced by the nodes still talking at the end (no BYEBYE, heard in the last second).
    package var finalSessions: [String]
    package var oneSession: Bool
    /// The node that founded the first of `finalSessions`, when it is in the capture (whose tempo it kept).
    package var finalFounder: Node?
    /// When the last of those nodes began announcing its final session, after the last founder's first message.
    package var convergedSAfterLastFounder: Double?
    /// Seconds from the first to the last Link message.
    package var captureS: Double

    enum CodingKeys: String, CodingKey {
        case nodes
        case foundedSessions = "founded_sessions"
        case smallestFounded = "smallest_founded"
        case founderGapS = "founder_gap_s"
        case olderFounderSession = "older_founder_session"
        case finalSessions = "final_sessions"
        case oneSession = "one_session"
        case finalFounder = "final_founder"
        case convergedSAfterLastFounder = "converged_s_after_last_founder"
        case captureS = "capture_s"
    }

    /// One decoded Link discovery message of a capture.
    package struct Message: Equatable, Sendable {
        /// Capture time, nanoseconds.
        package var timestampNanoseconds: Int64
        /// The sender's address, without the port.
        package var source: String
        package var message: LinkDiscoveryMessage
    }

    /// The Link discovery messages among `datagrams`, in capture order; anything that is not one (other
    /// traffic, measurement messages, a malformed datagram) is skipped.
    package static func messages(in datagrams: [CapturedDatagram]) -> [Message] {
        datagrams.compactMap { datagram in
            guard let message = try? LinkDiscoveryMessage.decode(datagram.payload) else { return nil }
            let source = datagram.source
            let host = source.hasPrefix("[") ? String(source.prefix { $0 != "]" }.dropFirst()) : String(source.prefix { $0 != ":" })
            return Message(timestampNanoseconds: datagram.timestampNanoseconds, source: host, message: message)
        }
    }

    /// The summary of `messages` (in capture order). No messages give an empty summary with `captureS` 0.
    package init(messages: [Message]) {
        var byNode: [String: Node] = [:]
        var order: [String] = []
        for entry in messages {
            let t = Double(entry.timestampNanoseconds) / 1e9
            let id = Self.hex(entry.message.sender.bytes)
            var node = byNode[id] ?? Node(node: id, src: entry.source, firstT: t, lastT: t, msgs: 0, lastType: "")
            if byNode[id] == nil { order.append(id) }
            node.msgs += 1
            node.lastT = t
            node.lastType = Self.name(entry.message.kind)
            if let state = entry.message.state {
                let session = Self.hex(state.sessionID.bytes)
                let tempo = (state.timeline.tempo.bpm * 1e6).rounded() / 1e6
                if node.firstSess == nil {
                    node.firstSess = session
                    node.firstTempo = tempo
                }
                if node.lastSess != session { node.sessSinceT = t }
                node.lastSess = session
                node.lastTempo = tempo
            }
            if !entry.source.contains(":") { node.src = entry.source }  // prefer the IPv4 address
            byNode[id] = node
        }
        let all = order.compactMap { byNode[$0] }.sorted { $0.firstT < $1.firstT }
        let end = messages.last.map { Double($0.timestampNanoseconds) / 1e9 } ?? 0
        let start = all.map(\.firstT).min() ?? 0
        let founders = all.filter { $0.firstSess == $0.node }
        let live = all.filter { $0.lastType != "BYEBYE" && $0.lastT >= end - 1.0 }
        let converged = live.map { $0.sessSinceT ?? $0.firstT }.max()
        func rounded(_ seconds: Double) -> Double { (seconds * 1e6).rounded() / 1e6 }

        nodes = all.map { node in
            var relative = node
            relative.firstT = rounded(node.firstT - start)
            relative.lastT = rounded(node.lastT - start)
            relative.sessSinceT = node.sessSinceT.map { rounded($0 - start) }
            return relative
        }
        foundedSessions = Set(founders.compactMap(\.firstSess)).sorted()
        smallestFounded = foundedSessions.first
        founderGapS = founders.count >= 2 ? rounded(founders[founders.count - 1].firstT - founders[0].firstT) : nil
        olderFounderSession = founders.first?.node
        finalSessions = Set(live.compactMap(\.lastSess)).sorted()
        oneSession = finalSessions.count == 1
        convergedSAfterLastFounder = converged.flatMap { time in founders.last.map { rounded(time - $0.firstT) } }
        captureS = rounded(end - start)
        let survivor = finalSessions.first
        finalFounder = nodes.first { $0.node == survivor }
    }

    /// Bytes as lowercase hex, two digits each (equal lengths compare as unsigned big-endian).
    package static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The message type as the Link documentation names it.
    package static func name(_ kind: LinkDiscoveryMessage.Kind) -> String {
        switch kind {
        case .alive: "ALIVE"
        case .response: "RESPONSE"
        case .byebye: "BYEBYE"
        }
    }
}
