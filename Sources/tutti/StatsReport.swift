import TuttiEngine
import TuttiWire

/// What `tutti stats` prints for one refresh: each peer's answer, as a table (`table`) or as one JSON object
/// (`StatsReport` is its shape). Pure: the same report gives the same text.
struct StatsReport: Codable, Equatable {
    /// One peer's answer.
    struct PeerStatistics: Codable, Equatable {
        var peer: String
        /// Its end of each of its connections (empty when it did not answer).
        var statistics: [ConnectionStatistics]
        /// Why the peer did not answer; absent when it did.
        var error: String?
    }

    /// When the refresh started (wall clock, seconds since 1970), for scripts that sample over time.
    var time: Double
    var peers: [PeerStatistics]

    /// The table of this report (see `StatsCommand`'s help for the columns).
    var table: TextTable {
        func receiving(_ stat: ConnectionStatistics, _ value: String) -> String { stat.role == .sending ? "-" : value }
        var rows = [TextTable.Row]()
        for answer in peers {
            for stat in answer.statistics {
                let sending = stat.role == .sending
                let rate = Double(stat.format.sampleRate)
                var notes = [String]()
                if !sending, let details = Self.details(of: stat) { notes.append(details) }
                if let device = Self.deviceNote(of: stat) { notes.append(device) }
                if let problem = stat.deviceProblem { notes.append("device stopped: " + problem) }
                if let reason = stat.failureReason { notes.append("output failed: " + reason) }
                rows.append(
                    TextTable.Row(
                        cells: [
                            stat.id.short, answer.peer, sending ? "send" : "recv", "\(stat.source)→\(stat.destination)",
                            stat.state.rawValue, String(sending ? stat.packetsSent : stat.packetsReceived),
                            receiving(stat, String(stat.packetsLost)), receiving(stat, String(stat.packetsLate)),
                            receiving(stat, String(stat.packetsDuplicated)), receiving(stat, String(stat.packetsReordered)),
                            receiving(stat, fixed(stat.jitterMilliseconds)),
                            receiving(stat, "\(fixed(stat.bufferMilliseconds, 1))/\(fixed(stat.targetMilliseconds, 1))"),
                            receiving(stat, String(stat.underruns)),
                            receiving(stat, fixed(Double(stat.concealedFrames) * 1000 / rate, 1)),
                            receiving(stat, stat.latencyMilliseconds.map { fixed($0) } ?? "-"),
                            Self.level(peak: stat.peakDBFS, rms: stat.rmsDBFS),
                        ],
                        notes: notes))
            }
            if let error = answer.error {
                rows.append(
                    TextTable.Row(cells: ["-", answer.peer, "", "", "no answer"] + Array(repeating: "", count: 11), notes: [error]))
            }
        }
        return TextTable(columns: Self.columns, rows: rows, emptyText: "(no connections)")
    }

    /// The columns, with the order in which a narrow terminal leaves them out (lowest priority first).
    static let columns: [TextTable.Column] = [
        .init(title: "ID"),
        .init(title: "PEER", truncation: .end, minimumWidth: 6),
        .init(title: "END"),
        .init(title: "CONNECTION", truncation: .middle, minimumWidth: 16),
        .init(title: "STATE"),
        .init(title: "SENT/RECV", unit: "pkts", alignment: .right, priority: 6),
        .init(title: "LOST", unit: "pkts", alignment: .right, priority: 10),
        .init(title: "LATE", unit: "pkts", alignment: .right, priority: 8),
        .init(title: "DUP", unit: "pkts", alignment: .right, priority: 2),
        .init(title: "REORD", unit: "pkts", alignment: .right, priority: 1),
        .init(title: "JITTER", unit: "ms", alignment: .right, priority: 5),
        .init(title: "BUF/TARGET", unit: "ms", alignment: .right, priority: 7),
        .init(title: "UNDERRUNS", alignment: .right, priority: 3),
        .init(title: "CONCEALED", unit: "ms", alignment: .right, priority: 4),
        .init(title: "LATENCY", unit: "ms", alignment: .right, priority: 9),
        .init(title: "PEAK/RMS", unit: "dBFS", alignment: .right, priority: 11),
    ]

    /// `peak/rms` in dBFS with one decimal; `-inf` at the floor (silence), `-` when not measured.
    static func level(peak: Double?, rms: Double?) -> String {
        func decibels(_ value: Double?) -> String {
            guard let value else { return "-" }
            return value <= -120 ? "-inf" : fixed(value, 1)
        }
        if peak == nil, rms == nil { return "-" }
        return decibels(peak) + "/" + decibels(rms)
    }

    /// The line under a receiving connection: codec, FEC, adaptive latency, the device clock's alignment, drift
    /// (when any applies).
    static func details(of stat: ConnectionStatistics) -> String? {
        var parts = [String]()
        if let bitrate = stat.bitrate {
            parts.append("opus \(bitrate / 1000)k, FEC-recovered \(stat.fecRecoveredFrames) frames")
        }
        if let range = stat.format.adaptiveLatencyFrames {
            let rate = Double(stat.format.sampleRate)
            parts.append(
                "adaptive \(fixed(Double(range.lowerBound) * 1000 / rate, 1))–\(fixed(Double(range.upperBound) * 1000 / rate, 1))ms: \(stat.latencyChanges) changes (+\(fixed(stat.stretchedMilliseconds, 1))/−\(fixed(stat.skippedMilliseconds, 1))ms)"
            )
        }
        if let waited = stat.deviceAlignmentMilliseconds {
            let moves = stat.deviceAlignmentMoves ?? 0
            let times = "\(moves) time\(moves == 1 ? "" : "s")"
            parts.append("clock follows the stream (waited \(fixed(waited, 2)) ms at its start, moved \(times) since)")
        }
        if let drift = stat.driftPartsPerMillion, let ratio = stat.resamplingRatio {
            let shown = (drift * 10).rounded() / 10 + 0  // + 0 turns a -0.0 into 0.0
            let role =
                stat.driftGroupRole.map { role in
                    switch role {
                    case .leads: " (leads its clock's group)"
                    case .follows: " (follows its clock's group)"
                    case .left: " (left its clock's group)"
                    }
                } ?? ""
            parts.append("drift \(shown >= 0 ? "+" : "")\(fixed(shown, 1)) ppm, ratio \(fixed(ratio, 6))\(role)")
        }
        if let stray = stat.strayDatagrams, stray > 0 {
            parts.append("socket dropped \(stray) stray datagrams")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// What the end's device clock did, at either end: periods it skipped (a stall of more than 100 ms), and
    /// its wake-ups later than half a period (a paced clock; the machine ran it late, so packets went out or
    /// were played late). nil when neither happened.
    static func deviceNote(of stat: ConnectionStatistics) -> String? {
        var parts = [String]()
        if stat.deviceOverruns > 0 {
            parts.append("device stalled: \(stat.deviceOverruns) periods skipped")
        }
        if let late = stat.deviceLateWakes, late > 0 {
            let worst = stat.deviceWorstWakeMilliseconds.map { ", the latest \(fixed($0, 2)) ms late" } ?? ""
            parts.append("device clock woke late \(late) time\(late == 1 ? "" : "s")\(worst)")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
