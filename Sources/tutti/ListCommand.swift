import ArgumentParser
import Foundation
import TuttiCore
import TuttiPeer
import TuttiWire

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List the session's peers, their ports and live connections.",
        discussion: """
            Each peer shows the control address another host can reach it at, each port its channels and \
            rates ("now" marks the rate a running port is fixed at until its connections end), each \
            connection its state, format and ID, and each pipeline that reaches a filter or receiver (from \
            its first sender through every filter, on any host) with its stable ID. With --json, every \
            port's routes list its sources and destinations, the ports upstream and downstream of it \
            through filters, and its pipelines. No peers found is not an error: the list is empty (a note \
            on stderr says where to look).
            """)

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print JSON: one array of peer descriptions (empty when no peers are found).")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let peers = try await session.findPeers()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                let data = try encoder.encode(PeerDescription.withDownstream(peers.compactMap(\.description)))
                print(String(decoding: data, as: UTF8.self))
                return
            }
            guard !peers.isEmpty else {
                printError("note: no peers found (is 'tutti peer' running, and avahi-daemon up? or use --peer HOST:PORT)")
                return
            }
            for peer in peers { print(Self.lines(for: peer).joined(separator: "\n")) }
        }
    }

    /// The lines that list one peer. Pure.
    static func lines(for peer: SessionPeer) -> [String] {
        guard let description = peer.description else {
            return ["\(peer.name)  (not answering: \(peer.problem ?? "?"))"]
        }
        let address = addressForOtherHosts(peer.endpoints).map(\.description) ?? "?"
        // Who may join: worth seeing at a glance on a network one does not own.
        let access = description.access.map { access in
            access.membersOnly
                ? "  members only (key \(access.keyFingerprint ?? "?"))\(access.publicReads ? ", public reads" : "")"
                : "  OPEN session: anyone on the network may join"
        }
        var lines = ["\(description.name)  id \(description.id.short)  host \(description.host)  control \(address)" + (access ?? "")]
        let nameWidth = description.ports.map(\.name.count).max() ?? 0
        for port in description.ports {
            let rates = port.sampleRates.map(String.init).joined(separator: "/")
            let rateText =
                description.runningSampleRates?[port.name].map { port.sampleRates == [$0] ? "\($0) Hz" : "\($0) Hz now (\(rates))" }
                ?? "\(rates) Hz"
            // A filter shows its processor as it is now (values set live), not the title it started with.
            let title =
                description.filters?.first { $0.port == port.name }.map { "\($0)".dropFirst(port.name.count + 2) } ?? port.title[...]
            let muted = description.routes?.first { $0.port == port.name }?.muted == true ? "  muted" : ""
            let separate =
                port.tracks.map { tracks in
                    "  separate: \(tracks) track\(tracks == 1 ? "" : "s"), \(fixed(port.trackLatencyMilliseconds ?? 0, 1)) ms after capture"
                } ?? ""
            lines.append(
                "  \(pad(port.kind.rawValue, 8)) \(pad(port.name, nameWidth))  \(port.channels)ch  \(rateText)  \(title)\(muted)\(separate)"
            )
        }
        for connection in description.connections {
            let arrow = connection.role == .sending ? "→" : "←"
            let other = connection.role == .sending ? connection.destination : connection.source
            let local = connection.role == .sending ? connection.source.port : connection.destination.port
            // A standard RTP receiver buffers on its own: only what is on the wire is ours to show.
            let toStandardReceiver = connection.rtpDestination.map { $0.portReference == connection.destination } ?? false
            let format = toStandardReceiver ? connection.format.wireDescription : connection.format.description
            lines.append(
                "  \(pad(connection.state.rawValue, 8)) \(local) \(arrow) \(other)  \(format)  [\(connection.id)]"
                    + (connection.track.map { "  track \($0 + 1)" } ?? "")
                    + (connection.failureReason.map { "  \($0)" } ?? "") + (connection.muted == true ? "  muted" : "")
                    + (connection.warning.map { "  warning: \($0)" } ?? ""))
        }
        // What feeds each filter and receiver, through every hop, with the pipelines' stable IDs.
        for route in description.routes ?? [] {
            for pipeline in route.pipelines where pipeline.ports.count > 1 {
                lines.append("  pipeline \(pipeline.id)  \(pipeline)")
            }
            for warning in route.warnings ?? [] { lines.append("  warning  \(route.port): \(warning)") }
        }
        // Strangers (or a misbehaving client) the peer turned away: worth knowing on a network one does not own.
        if let refusals = description.refusals, !refusals.isEmpty { lines.append("  turned away: \(refusals.summary)") }
        return lines
    }

    /// The control endpoint to show: one another host can use (not loopback, not a zoned link-local
    /// address), else the first. The CLI may have reached a peer on its own host through 127.0.0.1.
    static func addressForOtherHosts(_ endpoints: [ControlEndpoint]) -> ControlEndpoint? {
        endpoints.first { endpoint in
            guard !endpoint.host.contains("%"), let address = IPAddress(parsing: endpoint.host) else { return false }
            return !address.isLoopback && !address.isUnspecified
        } ?? endpoints.first
    }
}
