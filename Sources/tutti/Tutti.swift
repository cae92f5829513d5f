import ArgumentParser

@main
struct Tutti: AsyncParsableCommand {
    static func main() async {
        // Before any other thread exists, so that every thread inherits the blocked signals.
        SignalHandling.install()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "tutti",
        abstract: "Several Linux machines as one audio bus.",
        discussion: """
            Run 'tutti peer' on every machine; peers find each other through Avahi (DNS-SD, _tutti._udp).
            Then, from any machine: 'tutti ls' lists peers and ports, 'tutti connect PEER:PORT PEER:PORT'
            streams a sender port to a receiver port, 'tutti stats' shows live figures.
            Any standard RTP receiver can play a sender port too: 'tutti connect PEER:PORT rtp://HOST:PORT'
            streams to it and prints the SDP it needs; 'tutti sdp' prints the SDP of every live stream.
            """,
        subcommands: [
            PeerCommand.self, ListCommand.self, ConnectCommand.self, DisconnectCommand.self, StatsCommand.self,
            SDPCommand.self, ClockCommand.self, AnalyzeCommand.self,
        ])
}
