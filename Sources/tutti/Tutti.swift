import ArgumentParser
import TuttiPeer

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

            Exit status: 0 when done, or when there was nothing to do ('connect' of a pair already connected, \
            'ls' with no peers found); 1 when a peer refused or something failed (one line on stderr says \
            why; with --json, also a JSON object with "status": "error"); 64 for a usage error.
            Shell completion: tutti --generate-completion-script bash|zsh|fish; 'make install' installs it \
            and the man page (man tutti).
            """,
        version: TuttiVersion.description,
        subcommands: [
            PeerCommand.self, ListCommand.self, ConnectCommand.self, DisconnectCommand.self, StatsCommand.self,
            SetCommand.self, MuteCommand.self, UnmuteCommand.self, SDPCommand.self, ClockCommand.self, KeyCommand.self, AnalyzeCommand.self,
        ])
}
