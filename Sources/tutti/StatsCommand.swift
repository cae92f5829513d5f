#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import TuttiIO
import TuttiPeer
import TuttiWire

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Live per-connection figures, refreshed in place (like top).",
        discussion: """
            Each peer reports its own end of each connection, one row each: ID (the connection ID's first \
            8 digits), PEER (the peer reporting), END (send or recv), CONNECTION, STATE; SENT/RECV (packets \
            sent, or received), LOST (never arrived in time), LATE (arrived after their playout time), DUP \
            (duplicated), REORD (reordered), JITTER (RFC 3550), BUF/TARGET (audio buffered, against the \
            target), UNDERRUNS (times the buffer ran empty), CONCEALED (audio filled in for missing \
            packets), LATENCY (capture to playout); and PEAK/RMS, the level in dBFS over the last 0.5 s: \
            what a receiver plays (after drift compensation, before mixing with other connections), what a \
            sender sends. 0 dBFS is full scale: a tone of amplitude 0.5 peaks at -6.0 and its RMS is -9.0; \
            -inf is silence (below -120); - is not measured yet. Receiver-only columns show - for a sender.

            The table fits the terminal (COLUMNS, else the terminal's width, else 100 columns): long names \
            are cut with …, and the least important columns are left out (the last line counts them). \
            --wide shows every column in full.

            --json prints one JSON object per refresh, one per line (JSON Lines), and stops after --count \
            refreshes (default 1): {"time": SECONDS_SINCE_1970, "peers": [{"peer": NAME, "statistics": \
            [CONNECTION, …]}, …]}. A peer that did not answer has "statistics": [] and an "error" string. \
            A connection has id, role, source, destination, state, format, packetsSent, packetsReceived, \
            packetsLost, packetsLate, jitterMilliseconds, bufferMilliseconds, targetMilliseconds, \
            underruns, concealedFrames, latencyMilliseconds (absent until playout), peakDBFS and rmsDBFS \
            (-120 for silence; absent until measured), among others.
            """)

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print JSON Lines (one object per refresh) instead of a table.")
    var json = false

    @Flag(help: "Show every column, with names in full, however wide the table.")
    var wide = false

    @Option(help: ArgumentHelp("Seconds between refreshes.", valueName: "SECONDS"))
    var interval: Double = 1

    @Option(help: "Stop after this many refreshes (default: until Ctrl-C; 1 with --json).")
    var count: Int?

    func validate() throws {
        if !(interval >= 0.1 && interval <= 3600) { throw ValidationError("--interval must be between 0.1 and 3600 seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        try await reportingErrors {
            let peers = try await session.findPeers()
            let credentials = try session.credentials()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            // Nothing to watch is not a failure (as for 'ls'): say where to look, print the empty report, stop.
            guard !peers.isEmpty else {
                printError("note: no peers found (is 'tutti peer' running, and avahi-daemon up? or use --peer HOST:PORT)")
                if json { print(String(decoding: try encoder.encode(await Self.report(of: [], credentials: credentials)), as: UTF8.self)) }
                return
            }
            let refreshes = count ?? (json ? 1 : Int.max)
            let interactive = system_isatty(1) == 1 && !json
            for index in 0..<refreshes {
                if index > 0 { try await Task.sleep(for: .milliseconds(Int64(interval * 1000))) }
                let report = await Self.report(of: peers, credentials: credentials)
                if json {
                    print(String(decoding: try encoder.encode(report), as: UTF8.self))
                    flushStandardOutput()
                    continue
                }
                let lines = report.table.lines(width: wide ? nil : Self.terminalWidth())
                if interactive { print("\u{1B}[H\u{1B}[2J", terminator: "") } else if index > 0 { print("") }
                print(lines.joined(separator: "\n"))
                flushStandardOutput()
            }
        }
    }

    /// Asks every peer for its statistics; a peer that does not answer is reported with the reason.
    static func report(of peers: [SessionPeer], credentials: ControlCredentials?) async -> StatsReport {
        var report = StatsReport(time: Date().timeIntervalSince1970, peers: [])
        for peer in peers {
            guard peer.description != nil else {
                report.peers.append(.init(peer: peer.name, statistics: [], error: "not answering: \(peer.problem ?? "no reply")"))
                continue
            }
            do {
                switch try await ControlClient.send(.statistics, toAnyOf: peer.endpoints, credentials: credentials).0 {
                case .statistics(let list): report.peers.append(.init(peer: peer.name, statistics: list))
                case .failure(let failure): report.peers.append(.init(peer: peer.name, statistics: [], error: failure.description))
                default: report.peers.append(.init(peer: peer.name, statistics: [], error: "answered something else than statistics"))
                }
            } catch {
                report.peers.append(.init(peer: peer.name, statistics: [], error: "not answering: \(error)"))
            }
        }
        return report
    }

    /// The width to lay the table out for: `COLUMNS`, else the terminal's (TIOCGWINSZ on standard output),
    /// else 100.
    static func terminalWidth() -> Int {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        var size = winsize()
        if system_isatty(1) == 1, system_ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 100
    }
}
