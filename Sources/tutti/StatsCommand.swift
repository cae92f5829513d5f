#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import TuttiPeer
import TuttiWire

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Live per-connection figures, refreshed in place (like top).",
        discussion: """
            Each peer reports its own end of each connection: a sender counts packets sent; a receiver
            counts packets received, lost (never arrived in time), late (arrived after playout), duplicated
            and reordered, the RFC 3550 jitter, its buffer level against the target, underruns, concealed
            frames and the measured capture-to-playout latency.
            With --json, prints one JSON object per refresh (JSON Lines) and stops after --count refreshes (default 1).
            """)

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print JSON Lines instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("Seconds between refreshes.", valueName: "SECONDS"))
    var interval: Double = 1

    @Option(help: "Stop after this many refreshes (default: until Ctrl-C; 1 with --json).")
    var count: Int?

    func validate() throws {
        if !(interval >= 0.1 && interval <= 3600) { throw ValidationError("--interval must be between 0.1 and 3600 seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    struct Snapshot: Codable {
        var peer: String
        /// When the peer answered (wall clock, seconds since 1970), for scripts that sample over time.
        var time: Double
        var statistics: [ConnectionStatistics]
    }

    func run() async throws {
        try await reportingErrors {
            let peers = await session.findPeers().filter { $0.description != nil }
            guard !peers.isEmpty else { throw CLIError("no peers found (is 'tutti peer' running, and avahi-daemon up? or use --peer HOST:PORT)") }
            let refreshes = count ?? (json ? 1 : Int.max)
            let interactive = isatty(1) == 1 && !json
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for index in 0..<refreshes {
                if index > 0 { try await Task.sleep(for: .milliseconds(Int64(interval * 1000))) }
                var snapshots = [Snapshot]()
                for peer in peers {
                    if case .some((.statistics(let list), _)) = try? await ControlClient.send(.statistics, toAnyOf: peer.endpoints) {
                        snapshots.append(Snapshot(peer: peer.name, time: Date().timeIntervalSince1970, statistics: list))
                    }
                }
                if json {
                    print(String(decoding: try encoder.encode(snapshots), as: UTF8.self))
                    flushStandardOutput()
                    continue
                }
                var lines = [String]()
                lines.append(
                    [pad("PEER", 10), pad("END", 5), pad("CONNECTION", 30), pad("STATE", 9), pad("SENT/RECV", 10), pad("LOST", 6),
                     pad("LATE", 5), pad("DUP", 4), pad("REORD", 6), pad("JITTER", 7), pad("BUFFER/TARGET", 14), pad("UNDERRUN", 9),
                     pad("CONCEALED", 10), "LATENCY"].joined(separator: " "))
                for snapshot in snapshots {
                    for stat in snapshot.statistics {
                        let link = "\(stat.source)→\(stat.destination)"
                        let sending = stat.role == .sending
                        lines.append(
                            [pad(snapshot.peer, 10), pad(sending ? "send" : "recv", 5), pad(link, 30), pad(stat.state.rawValue, 9),
                             pad(String(sending ? stat.packetsSent : stat.packetsReceived), 10),
                             pad(sending ? "-" : String(stat.packetsLost), 6), pad(sending ? "-" : String(stat.packetsLate), 5),
                             pad(sending ? "-" : String(stat.packetsDuplicated), 4), pad(sending ? "-" : String(stat.packetsReordered), 6),
                             pad(sending ? "-" : fixed(stat.jitterMilliseconds) + "ms", 7),
                             pad(sending ? "-" : "\(fixed(stat.bufferMilliseconds, 1))/\(fixed(stat.targetMilliseconds, 1))ms", 14),
                             pad(sending ? "-" : String(stat.underruns), 9), pad(sending ? "-" : String(stat.concealedFrames), 10),
                             sending ? "-" : stat.latencyMilliseconds.map { fixed($0) + "ms" } ?? "-"].joined(separator: " "))
                        if !sending, let details = Self.details(of: stat) { lines.append(pad("", 17) + details) }
                        if let problem = stat.deviceProblem { lines.append(pad("", 17) + "device stopped: " + problem) }
                    }
                }
                if snapshots.allSatisfy({ $0.statistics.isEmpty }) { lines.append("(no connections)") }
                if interactive { print("\u{1B}[H\u{1B}[2J", terminator: "") } else if index > 0 { print("") }
                print(lines.joined(separator: "\n"))
                flushStandardOutput()
            }
        }
    }

    /// The second line of a receiving connection: codec, FEC, adaptive latency, drift (when any applies).
    static func details(of stat: ConnectionStatistics) -> String? {
        var parts = [String]()
        if let bitrate = stat.bitrate {
            parts.append("opus \(bitrate / 1000)k, FEC-recovered \(stat.fecRecoveredFrames) frames")
        }
        if let range = stat.format.adaptiveLatencyFrames {
            let rate = Double(stat.format.sampleRate)
            parts.append(
                "adaptive \(fixed(Double(range.lowerBound) * 1000 / rate, 1))–\(fixed(Double(range.upperBound) * 1000 / rate, 1))ms: \(stat.latencyChanges) changes (+\(fixed(stat.stretchedMilliseconds, 1))/−\(fixed(stat.skippedMilliseconds, 1))ms)")
        }
        if let drift = stat.driftPartsPerMillion, let ratio = stat.resamplingRatio {
            parts.append("drift \(drift >= 0 ? "+" : "")\(fixed(drift, 1)) ppm, ratio \(String(format: "%.6f", ratio))")
        }
        if let reason = stat.failureReason { parts.append("output failed: \(reason)") }
        if stat.deviceOverruns > 0 {
            parts.append("device stalled: \(stat.deviceOverruns) periods skipped")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
