import ArgumentParser
import TuttiPeer
import TuttiWire

/// `tutti set PEER:PORT NAME=VALUE…`: changes a filter port's parameters live, from any host.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Change a filter port's parameters live, from any host.",
        discussion: """
            Every value is checked against its range first: all of them change, or none (the first refused \
            one is named). The engine applies them at its next period; a gain glides over 10 ms. \
            'tutti ls' lists each filter's processor and values; 'tutti peer --help' every processor's \
            parameters.
            Example: tutti set fx:vox db=-6
                     tutti set fx:vox freq=250 q=1.4
            """)

    @Argument(help: ArgumentHelp("The filter port.", valueName: "PEER:PORT"))
    var portText: String

    @Argument(help: ArgumentHelp("Parameters to change.", valueName: "NAME=VALUE"))
    var settingTexts: [String] = []

    @Flag(help: "Print the result as one JSON object: {\"status\": \"set\"|\"error\", \"filter\": …, \"error\": …}.")
    var json = false

    @OptionGroup var session: SessionOptions

    var port: PortArgument { get throws { try PortArgument(parsing: portText) } }

    /// The settings as given, in order.
    var settings: [ParameterSetting] {
        get throws {
            try settingTexts.map { text in
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex else {
                    throw ValidationError("'\(text)' is not NAME=VALUE, e.g. db=-6")
                }
                return ParameterSetting(name: String(text[..<equals]), value: String(text[text.index(after: equals)...]))
            }
        }
    }

    func validate() throws {
        guard try port.port != nil else {
            throw ValidationError("name the filter port as PEER:PORT ('\(portText)' has no port; 'tutti ls' lists them)")
        }
        guard !settingTexts.isEmpty else { throw ValidationError("give at least one NAME=VALUE, e.g. db=-6") }
        guard settingTexts.count <= 16 else { throw ValidationError("at most 16 parameters at once") }
        _ = try settings
    }

    /// What `--json` prints: one object, whatever the outcome.
    struct Result: Encodable {
        var status: String
        var filter: FilterState?
        var error: String?
    }

    func run() async throws {
        try await reportingErrors(json: json, as: { Result(status: "error", error: $0) }) {
            let reference = try port.reference
            let peers = try await session.findPeers(wanted: [reference.peer])
            let credentials = try session.credentials()
            let target = try session.peer(named: reference.peer, in: peers)
            let request = SetParametersRequest(port: reference.port, settings: try settings)
            let response: ControlResponse
            do {
                (response, _) = try await ControlClient.send(.setParameters(request), toAnyOf: target.endpoints, credentials: credentials)
            } catch let failure as ControlFailure {
                throw CLIError("cannot set \(reference): \(failure.message)")
            }
            switch response {
            case .filter(let state):
                if json { printJSON(Result(status: "set", filter: state)) } else { print("\(target.name):\(state)") }
            case .failure(let failure): throw CLIError(failure.message)
            default: throw CLIError("cannot set \(reference): unexpected answer \(response.typeName)")
            }
        }
    }
}
