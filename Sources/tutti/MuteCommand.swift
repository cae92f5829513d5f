import ArgumentParser
import TuttiPeer
import TuttiWire

/// `tutti mute PEER:PORT [DESTINATION]` and `tutti unmute …`: silences (or brings back) a port or one of its
/// connections, from any host, with short fades.
struct MuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Mute a port, or one connection from it, from any host (fades, no click).",
        discussion: """
            A port: everything it sends (a sender or filter) or plays (a receiver) fades to silence over \
            10 ms. A port and a destination: only that connection from the port. Streams keep running and \
            keep their timing: muted audio is silence, not a gap. 'tutti unmute' takes the same arguments; \
            'tutti ls' shows what is muted.
            Example: tutti mute stage:vox
                     tutti mute stage:out foh:in
                     tutti unmute stage:out foh:in
            """)

    @OptionGroup var target: MuteTarget

    func run() async throws { try await target.run(muting: true) }
}

/// What `tutti mute` and `tutti unmute` take: the port, maybe one destination, and the session options.
struct MuteTarget: ParsableArguments {
    @Argument(help: ArgumentHelp("The port.", valueName: "PEER:PORT"))
    var portText: String

    @Argument(
        help: ArgumentHelp("Only the connection to this receiver port or RTP address.", valueName: "PEER:PORT|rtp://HOST:PORT"))
    var destinationText: String?

    @Flag(help: "Print the result as one JSON object: {\"status\": \"muted\"|\"unmuted\"|\"error\", \"mute\": …, \"error\": …}.")
    var json = false

    @OptionGroup var session: SessionOptions

    func validate() throws {
        guard try PortArgument(parsing: portText).port != nil else {
            throw ValidationError("name the port as PEER:PORT ('\(portText)' has no port; 'tutti ls' lists them)")
        }
        if let destinationText, case .port(let argument) = try ConnectTarget(parsing: destinationText), argument.port == nil {
            throw ValidationError("name the receiver port as PEER:PORT ('\(destinationText)' has no port; 'tutti ls' lists them)")
        }
    }

    /// What `--json` prints: one object, whatever the outcome.
    struct Result: Encodable {
        var status: String
        var mute: MuteState?
        var error: String?
    }

    /// Asks the port's peer to mute (or unmute) and prints what it did.
    func run(muting: Bool) async throws {
        try await reportingErrors(json: json, as: { Result(status: "error", error: $0) }) {
            let reference = try PortArgument(parsing: portText).reference
            let destination: PortReference? =
                switch try destinationText.map({ try ConnectTarget(parsing: $0) }) {
                case .port(let argument)?: argument.reference
                case .rtp(let address)?: address.portReference
                case nil: nil
                }
            let peers = try await session.findPeers(wanted: [reference.peer])
            let credentials = try session.credentials()
            let target = try session.peer(named: reference.peer, in: peers)
            let request = MuteRequest(port: reference.port, destination: destination, muted: muting)
            let verb = muting ? "mute" : "unmute"
            let response: ControlResponse
            do {
                (response, _) = try await ControlClient.send(.mute(request), toAnyOf: target.endpoints, credentials: credentials)
            } catch let failure as ControlFailure {
                throw CLIError("cannot \(verb) \(reference): \(failure.message)")
            }
            switch response {
            case .muted(let state):
                let status = state.muted ? "muted" : "unmuted"
                if json {
                    printJSON(Result(status: status, mute: state))
                } else if let destination {
                    let count = state.connections.count
                    print("\(status) \(state.port) → \(destination) (\(count) connection\(count == 1 ? "" : "s"))")
                } else {
                    print("\(status) \(state.port)")
                }
            case .failure(let failure): throw CLIError(failure.message)
            default: throw CLIError("cannot \(verb) \(reference): unexpected answer \(response.typeName)")
            }
        }
    }
}

/// `tutti unmute`: `tutti mute`'s arguments, the other way.
struct UnmuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute",
        abstract: "Unmute a port, or one connection from it, from any host (fades, no click).",
        discussion: """
            Takes what 'tutti mute' takes; the audio fades back in over 10 ms.
            Example: tutti unmute stage:vox
                     tutti unmute stage:out foh:in
            """)

    @OptionGroup var target: MuteTarget

    func run() async throws { try await target.run(muting: false) }
}
