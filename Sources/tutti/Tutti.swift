import ArgumentParser

@main
struct Tutti: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tutti",
        abstract: "Several Linux machines as one audio bus.",
        discussion: """
            Run 'tutti peer' on every machine; peers find each other through Avahi (DNS-SD, _tutti._udp).
            Then, from any machine: 'tutti ls' lists peers and ports, 'tutti connect PEER:PORT PEER:PORT'
            streams a sender port to a receiver port, 'tutti stats' shows live figures.
            """,
        subcommands: [
            PeerCommand.self, ListCommand.self, ConnectCommand.self, DisconnectCommand.self, StatsCommand.self,
            ClockCommand.self, AnalyzeCommand.self,
        ])
}
