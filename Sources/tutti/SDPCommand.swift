import ArgumentParser
import TuttiPeer
import TuttiWire

/// `tutti sdp [PEER[:PORT]]`: the SDP of every live sending connection, so a standard RTP receiver can be
/// set up for it.
struct SDPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdp",
        abstract: "Print the SDP description of live streams, for a standard RTP receiver.",
        discussion: """
            For every live sending connection (of one peer, or of one sender port, if given), prints the \
            RFC 8866 description a standard RTP receiver (ffmpeg, GStreamer, PipeWire's RTP source) needs \
            to play it: address, port, payload type and format. Descriptions are separated by an empty line; \
            --connection picks one.
            Example: tutti sdp stage:out --connection 1f2e3d4c5b6a7988 > stream.sdp
                     ffmpeg -protocol_whitelist file,udp,rtp -i stream.sdp out.wav
            """)

    @Argument(help: ArgumentHelp("A peer, or one of its sender ports (default: every peer).", valueName: "PEER[:PORT]"))
    var selection: String?

    @Option(help: ArgumentHelp("Only the connection with this id (as 'tutti ls' shows it).", valueName: "ID"))
    var connection: String?

    @Flag(help: "Print one JSON array: {\"connection\": ID, \"source\": PEER:PORT, \"destination\": …, \"sdp\": TEXT} per stream.")
    var json = false

    @OptionGroup var session: SessionOptions

    /// One stream, as `--json` prints it.
    struct Entry: Encodable {
        var connection: String
        var source: String
        var destination: String
        var sdp: String
    }

    func validate() throws {
        if let connection, ConnectionID(connection) == nil { throw ValidationError("--connection must be 16 lowercase hex digits") }
        if let selection, selection.isEmpty || selection.hasPrefix(":") { throw ValidationError("'\(selection)' is not PEER or PEER:PORT") }
    }

    func run() async throws {
        try await reportingErrors {
            let port = selection.flatMap(PortReference.init(parsing:))
            let peerName = port?.peer ?? selection
            let peers = try await session.findPeers(wanted: peerName.map { [$0] } ?? [])
            let chosen = try peerName.map { [try session.peer(named: $0, in: peers)] } ?? peers.filter { $0.description != nil }
            var descriptions = [SessionDescription]()
            var entries = [Entry]()
            for peer in chosen {
                guard let description = peer.description else { continue }
                let origin = peer.endpoints.first?.host ?? description.host
                for summary in description.connections where summary.role == .sending {
                    if let port, summary.source.port != port.port { continue }
                    if let connection, summary.id.rawValue != connection { continue }
                    if summary.srtp != nil, summary.rtpDestination != nil {
                        printError(
                            "note: \(summary.source) → \(summary.destination) [\(summary.id)] is SRTP: its key is only in the SDP file written by the connect that made it"
                        )
                        continue
                    }
                    guard let sdp = SessionDescription(connection: summary, originHost: origin) else {
                        printError(
                            "note: \(summary.source) → \(summary.destination) [\(summary.id)]: its peer does not report where the packets go (an older peer?)"
                        )
                        continue
                    }
                    descriptions.append(sdp)
                    entries.append(
                        Entry(
                            connection: summary.id.rawValue, source: summary.source.description,
                            destination: summary.destination.description,
                            sdp: sdp.text))
                }
            }
            guard !descriptions.isEmpty else {
                let scope = selection.map { "of \($0)" } ?? "in the session"
                throw CLIError("no live sending connection \(scope)\(connection.map { " with id \($0)" } ?? "")")
            }
            if json {
                printJSON(entries)
            } else {
                print(descriptions.map(\.text).joined(separator: "\r\n"), terminator: "")
            }
        }
    }
}
