import ArgumentParser
import Foundation
import TuttiPeer
import TuttiWire

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List the session's peers, their ports and live connections.")

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print JSON (one array of peer descriptions).")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let peers = await session.findPeers()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                let data = try encoder.encode(peers.compactMap(\.description))
                print(String(decoding: data, as: UTF8.self))
                return
            }
            guard !peers.isEmpty else { throw CLIError("no peers found (is 'tutti peer' running, and avahi-daemon up? or use --peer HOST:PORT)") }
            for peer in peers {
                guard let description = peer.description else {
                    print("\(peer.name)  (not answering: \(peer.problem ?? "?"))")
                    continue
                }
                let address = peer.endpoints.first.map(\.description) ?? "?"
                print("\(description.name)  id \(description.id.short)  host \(description.host)  control \(address)")
                for port in description.ports {
                    let rates = port.sampleRates.map(String.init).joined(separator: "/")
                    print("  \(pad(port.kind.rawValue, 8)) \(pad(port.name, 12)) \(port.channels)ch  \(rates) Hz  \(port.title)")
                }
                for connection in description.connections {
                    let arrow = connection.role == .sending ? "→" : "←"
                    let other = connection.role == .sending ? connection.destination : connection.source
                    let local = connection.role == .sending ? connection.source.port : connection.destination.port
                    // A standard RTP receiver buffers on its own: only what is on the wire is ours to show.
                    let toStandardReceiver = connection.rtpDestination.map { $0.portReference == connection.destination } ?? false
                    let format = toStandardReceiver ? connection.format.wireDescription : connection.format.description
                    print("  \(pad(connection.state.rawValue, 8)) \(local) \(arrow) \(other)  \(format)  [\(connection.id)]"
                        + (connection.failureReason.map { "  \($0)" } ?? ""))
                }
            }
        }
    }
}
