// tutti-bench-analyze: the lab benchmark's analysis steps (scripts/bench/run). Each prints one JSON object
// (glitches: one word or number). The figures' definitions are in the types of TuttiAnalysis they use
// (ImpulseDelays, ToneDamage, SeriesSummary, CounterSteps, JackTripStatusLine) and in the report.
//
//   impulse RAW META    the probe's recording (interleaved float32 tone/click, little-endian; META its JSON)
//   stats JSONL [PROBE] `tutti stats --json` samples: per receiving connection the latency and buffer series,
//                       the counters' increase over the window, and its glitches in episodes beside the late
//                       wake-ups of both peers' device clocks and of PROBE (wake_lateness's JSON with "late")
//   iostat LOG          JackTrip's `-I 1` lines: its counters' increase over the window
//   snapshot NAME=PID[,PID...]...   /proc CPU ticks and per-thread context switches of process groups
//   cpu BEFORE AFTER [NAME=SECONDS:PERFCSV...]   two snapshots -> per group CPU, switches, system calls
//   glitches RESULT     a run's glitch count for the floor sweep, or "refused" / "unmeasured"
//
// Exit status: 0; 1 with one line on standard error for an unreadable or malformed input; 2 for a usage error.

import Foundation
import TuttiAnalysis
import TuttiCore
import TuttiIO

#if canImport(Glibc)
import Glibc
#endif

struct AnalysisError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func readText(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else { throw AnalysisError("cannot read \(path)") }
    return String(decoding: data, as: UTF8.self)
}

func readJSON(_ path: String) throws -> [String: Any] {
    guard let data = FileManager.default.contents(atPath: path) else { throw AnalysisError("cannot read \(path)") }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw AnalysisError("\(path) is not a JSON object")
    }
    return object
}

/// A Codable value as a JSON object (to merge with figures passed through as they are).
func object(_ value: some Encodable) throws -> Any {
    try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
}

func int(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }
func double(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

// MARK: impulse

func impulse(raw: String, meta metaPath: String) throws -> Any {
    let meta = try readJSON(metaPath)
    guard let rate = int(meta["rate"]), rate > 0, let interval = int(meta["intervalFrames"]), interval > 0,
        let first = int(meta["firstImpulseFrame"]), first >= 0, let hz = double(meta["toneHz"])
    else { throw AnalysisError("\(metaPath): rate, intervalFrames, firstImpulseFrame and toneHz are required") }
    guard let data = FileManager.default.contents(atPath: raw) else { throw AnalysisError("cannot read \(raw)") }
    let frames = data.count / 8
    var tone = [Float](repeating: 0, count: frames)
    var clicks = [Float](repeating: 0, count: frames)
    data.withUnsafeBytes { bytes in
        for frame in 0..<frames {
            tone[frame] = Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * frame, as: UInt32.self)))
            clicks[frame] = Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * frame + 4, as: UInt32.self)))
        }
    }
    let impulses = ImpulseDelays(recording: clicks, firstFrame: first, intervalFrames: interval)
    // Damaged tone blocks, from the first returned impulse on.
    let start = first + (impulses.delayFrames.first ?? frames)
    let damage = ToneDamage.measure(tone, sampleRate: rate, frequency: hz, from: start, to: frames)
    var result = try object(damage) as? [String: Any] ?? [:]
    result["rate"] = rate
    result["period"] = meta["period"] ?? NSNull()
    result["recordedFrames"] = frames
    result["probeXruns"] = meta["xruns"] ?? NSNull()
    result["impulses"] = impulses.delayFrames.count
    result["missing"] = impulses.missing
    result["delayFrames"] = impulses.delayFrames
    result["roundTripMs"] = try object(SeriesSummary(impulses.delayFrames.map { Double($0) * 1000 / Double(rate) }))
    result["serverCycles"] = meta["serverCycles"] ?? NSNull()
    return result
}

// MARK: stats

let counters = [
    "packetsReceived", "packetsLost", "packetsLate", "packetsDuplicated", "packetsReordered", "packetsInvalid",
    "underruns", "concealedFrames", "latencyChanges", "packetsPending",
]

func stats(_ path: String, probe probePath: String? = nil) throws -> Any {
    // The probes' late wake-ups and the stolen time read beside them, on the wall clock the samples' times are on.
    var probe: [GlitchEpisodes.ProbeWake]?
    var steal: [GlitchEpisodes.Steal]?
    if let probePath {
        let report = try readJSON(probePath)
        probe = (report["late"] as? [[Any]] ?? []).compactMap { entry in
            guard entry.count >= 2, let time = double(entry[0]), let microseconds = double(entry[1]) else { return nil }
            return GlitchEpisodes.ProbeWake(time: time, microseconds: microseconds, cpu: entry.count > 2 ? int(entry[2]) : nil)
        }
        if let increases = (report["steal"] as? [String: Any])?["increases"] as? [[Any]] {
            steal = increases.compactMap { entry in
                guard entry.count == 3, let time = double(entry[0]), let cpu = int(entry[1]), let milliseconds = double(entry[2])
                else { return nil }
                return GlitchEpisodes.Steal(time: time, cpu: cpu, milliseconds: milliseconds)
            }
        }
    }
    // The sending side's device clock late wake-ups, by connection id and sample time.
    var senderWakes: [String: [Double: Int]] = [:]
    struct Series {
        var source: String
        var destination: String
        var format: [String: Any]
        var samples: [(time: Double, statistics: [String: Any])] = []
    }
    var series: [String: Series] = [:]
    var order: [String] = []
    for line in try readText(path).split(separator: "\n") {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("{") || text.hasPrefix("["), let value = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        else { continue }
        // One object per refresh: {"time": T, "peers": [{"peer": …, "statistics": […]}]}; before the meter
        // commit, an array of {"peer", "time", "statistics"}.
        var peers: [(time: Double, statistics: [[String: Any]])] = []
        if let report = value as? [String: Any], let time = double(report["time"]) {
            for peer in report["peers"] as? [[String: Any]] ?? [] { peers.append((time, peer["statistics"] as? [[String: Any]] ?? [])) }
        } else if let list = value as? [[String: Any]] {
            for peer in list { peers.append((double(peer["time"]) ?? 0, peer["statistics"] as? [[String: Any]] ?? [])) }
        }
        for peer in peers {
            for statistics in peer.statistics where statistics["role"] as? String == "sending" {
                if let id = statistics["id"] as? String, let wakes = int(statistics["deviceLateWakes"]) {
                    senderWakes[id, default: [:]][peer.time] = wakes
                }
            }
            for statistics in peer.statistics where statistics["role"] as? String == "receiving" {
                guard let id = statistics["id"] as? String, let source = statistics["source"] as? [String: Any],
                    let destination = statistics["destination"] as? [String: Any],
                    let format = statistics["format"] as? [String: Any]
                else { throw AnalysisError("\(path): a receiving connection without id, source, destination or format") }
                if series[id] == nil {
                    order.append(id)
                    series[id] = Series(
                        source: "\(source["peer"] ?? "?"):\(source["port"] ?? "?")",
                        destination: "\(destination["peer"] ?? "?"):\(destination["port"] ?? "?")", format: format)
                }
                series[id]!.samples.append((peer.time, statistics))
            }
        }
    }
    var connections: [Any] = []
    for id in order {
        let entry = series[id]!
        let (t0, first) = entry.samples[0]
        let last = entry.samples[entry.samples.count - 1].statistics
        var increase: [String: Int] = [:]
        for key in counters { increase[key] = (int(last[key]) ?? 0) - (int(first[key]) ?? 0) }
        let rate = Double(int(entry.format["sampleRate"]) ?? 48000)
        func summary(_ key: String) throws -> Any { try object(SeriesSummary(entry.samples.compactMap { double($0.statistics[key]) })) }
        // Both peers answer one `tutti stats` call: a receiving sample's sending side has the same time (a
        // sample without it keeps the last count seen).
        let sent = senderWakes[id] ?? [:]
        var lastSent = 0
        var lastReceived = 0
        let episodes = GlitchEpisodes(
            samples: entry.samples.map { sample in
                let glitches = ["packetsLost", "packetsLate", "underruns"].reduce(0) { $0 + (int(sample.statistics[$1]) ?? 0) }
                lastSent = sent[sample.time] ?? lastSent
                lastReceived = int(sample.statistics["deviceLateWakes"]) ?? lastReceived
                return GlitchEpisodes.Sample(
                    time: sample.time, glitches: glitches, senderLateWakes: lastSent, receiverLateWakes: lastReceived)
            }, probeLateWakes: probe, steal: steal)
        connections.append(
            [
                "id": id, "source": entry.source, "destination": entry.destination, "format": entry.format,
                "windowSeconds": entry.samples[entry.samples.count - 1].time - t0, "samples": entry.samples.count,
                "states": Set(entry.samples.compactMap { $0.statistics["state"] as? String }).sorted(),
                "increase": increase, "concealedMs": Double(increase["concealedFrames"]!) * 1000 / rate,
                "latencyMs": try summary("latencyMilliseconds"), "targetMs": try summary("targetMilliseconds"),
                "bufferMs": try summary("bufferMilliseconds"), "jitterMs": last["jitterMilliseconds"] ?? NSNull(),
                "episodes": try object(episodes),
                "series": entry.samples.map { sample -> [Any] in
                    [
                        ((sample.time - t0) * 1000).rounded() / 1000, sample.statistics["latencyMilliseconds"] ?? NSNull(),
                        sample.statistics["bufferMilliseconds"] ?? NSNull(), sample.statistics["targetMilliseconds"] ?? NSNull(),
                    ]
                },
            ] as [String: Any])
    }
    return ["connections": connections]
}

// MARK: iostat

func iostat(_ path: String) throws -> Any {
    let rows = try readText(path).split(separator: "\n").compactMap(JackTripStatusLine.init)
    guard rows.count >= 2 else { return ["lines": rows.count] }
    let protocolCount = rows.map(\.protocolCounters.count).min() ?? 0
    return [
        "lines": rows.count, "recvUnderruns": CounterSteps.increase(rows.map { $0.receive[0] }),
        "recvOverflows": CounterSteps.increase(rows.map { $0.receive[1] }),
        "sendUnderruns": CounterSteps.increase(rows.map { $0.send[0] }),
        "protocol": (0..<protocolCount).map { k in CounterSteps.increase(rows.map { $0.protocolCounters[k] }) },
        "packets": CounterSteps.increase(rows.map(\.total)),
    ] as [String: Any]
}

// MARK: snapshot and cpu

/// /proc figures of named process groups: CPU ticks (utime + stime of /proc/PID/stat, all threads) and
/// context switches per thread (/proc/PID/task/*/status: /proc/PID/status alone is the main thread's). A
/// process that is gone is left out.
func snapshot(_ specs: [String]) throws -> Any {
    let now = MonotonicClock().now()
    var groups: [String: Any] = [:]
    for spec in specs {
        guard let equals = spec.firstIndex(of: "=") else { throw AnalysisError("snapshot: \(spec) is not NAME=PID[,PID...]") }
        var pids: [Int] = []
        var ticks = 0
        var tasks: [String: [Int]] = [:]
        for pid in spec[spec.index(after: equals)...].split(separator: ",") {
            guard let stat = try? readText("/proc/\(pid)/stat"), let cpu = ProcessStat.cpuTicks(statLine: stat),
                let taskList = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), let id = Int(pid)
            else { continue }
            pids.append(id)
            ticks += cpu
            for task in taskList {
                guard let status = try? readText("/proc/\(pid)/task/\(task)/status") else { continue }  // a thread that ended
                var counts = [0, 0]
                for line in status.split(separator: "\n") {
                    if line.hasPrefix("voluntary_ctxt_switches:") { counts[0] = Int(line.split(separator: "\t").last ?? "") ?? 0 }
                    if line.hasPrefix("nonvoluntary_ctxt_switches:") { counts[1] = Int(line.split(separator: "\t").last ?? "") ?? 0 }
                }
                tasks[task] = counts
            }
        }
        groups[String(spec[..<equals])] = ["pids": pids, "ticks": ticks, "tasks": tasks] as [String: Any]
    }
    return ["t": Double(now.nanoseconds) / 1e9, "groups": groups] as [String: Any]
}

/// The count in a `perf stat -x,` output file, or nil (not counted, or perf failed).
func perfCount(_ path: String) -> Int? {
    guard let text = try? readText(path) else { return nil }
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        if fields.count > 2, fields[2].hasPrefix("raw_syscalls:sys_enter") { return Int(fields[0]) }
    }
    return nil
}

func cpu(before beforePath: String, after afterPath: String, perf perfSpecs: [String]) throws -> Any {
    let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
    let before = try readJSON(beforePath)
    let after = try readJSON(afterPath)
    guard let t0 = double(before["t"]), let t1 = double(after["t"]), let groupsBefore = before["groups"] as? [String: Any],
        let groupsAfter = after["groups"] as? [String: Any]
    else { throw AnalysisError("\(beforePath), \(afterPath): not two snapshots of tutti-bench-analyze snapshot") }
    var perf: [String: (seconds: Double, path: String)] = [:]
    for spec in perfSpecs {
        let parts = spec.split(separator: "=", maxSplits: 1)
        let value = parts.count == 2 ? parts[1].split(separator: ":", maxSplits: 1) : []
        guard value.count == 2, let seconds = Double(value[0]) else { throw AnalysisError("cpu: \(spec) is not NAME=SECONDS:FILE") }
        perf[String(parts[0])] = (seconds, String(value[1]))
    }
    var out: [String: Any] = [:]
    for (name, value) in groupsAfter {
        guard let b = value as? [String: Any], let a = groupsBefore[name] as? [String: Any],
            let pids = b["pids"] as? [Any], !pids.isEmpty
        else { continue }
        let wall = t1 - t0
        var entry: [String: Any] = [
            "cpuSeconds": Double((int(b["ticks"]) ?? 0) - (int(a["ticks"]) ?? 0)) / tick, "wallSeconds": wall,
            "processes": pids.count,
        ]
        // Per thread: a thread that started in the window counts from 0; one that ended is left out (its
        // switches in the window are lost: threadsEnded says how many).
        let tasksBefore = a["tasks"] as? [String: [Int]] ?? [:]
        let tasksAfter = b["tasks"] as? [String: [Int]] ?? [:]
        var voluntary = 0
        var nonvoluntary = 0
        for (task, counts) in tasksAfter {
            let previous = tasksBefore[task] ?? [0, 0]
            voluntary += counts[0] - previous[0]
            nonvoluntary += counts[1] - previous[1]
        }
        entry["voluntarySwitches"] = voluntary
        entry["nonvoluntarySwitches"] = nonvoluntary
        entry["threads"] = tasksAfter.count
        entry["threadsStarted"] = Set(tasksAfter.keys).subtracting(tasksBefore.keys).count
        entry["threadsEnded"] = Set(tasksBefore.keys).subtracting(tasksAfter.keys).count
        entry["switchesPerSecond"] = wall > 0 ? Double(voluntary + nonvoluntary) / wall : NSNull()
        if let (seconds, path) = perf[name] {
            let count = perfCount(path)
            entry["syscalls"] = count ?? NSNull()
            entry["syscallsPerSecond"] = count.map { Double($0) / seconds } ?? NSNull()
        }
        out[name] = entry
    }
    return out
}

// MARK: glitches

/// The floor sweep's verdict on one run: Tutti, lost + late + underruns of every receiving leg; JackTrip,
/// receive underruns of both hosts; "refused" or "unmeasured" when there is no count.
func glitches(_ path: String) throws -> String {
    let result = try readJSON(path)
    if result["refused"] as? Bool == true { return "refused" }
    if result["tool"] as? String == "jacktrip" {
        let counts = ["iostat", "farIostat"].compactMap { int((result[$0] as? [String: Any])?["recvUnderruns"]) }
        return counts.count == 2 ? String(counts.reduce(0, +)) : "unmeasured"
    }
    var seen = Set<String>()
    var total = 0
    for source in ["stats", "returnStats"] {
        for connection in (result[source] as? [String: Any])?["connections"] as? [[String: Any]] ?? [] {
            let key = "\(connection["id"] ?? "") \(connection["source"] ?? "") \(connection["destination"] ?? "")"
            guard seen.insert(key).inserted else { continue }  // both peers' stats may list the same connection
            let increase = connection["increase"] as? [String: Any] ?? [:]
            total += max(0, int(increase["packetsLost"]) ?? 0) + (int(increase["packetsLate"]) ?? 0) + (int(increase["underruns"]) ?? 0)
        }
    }
    let expected = result["mode"] as? String == "jack-loop" ? 2 : 1
    return seen.count >= expected ? String(total) : "unmeasured"
}

// MARK: main

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let result: Any
    switch (arguments.first, arguments.count) {
    case ("impulse", 3): result = try impulse(raw: arguments[1], meta: arguments[2])
    case ("stats", 2): result = try stats(arguments[1])
    case ("stats", 3): result = try stats(arguments[1], probe: arguments[2])
    case ("iostat", 2): result = try iostat(arguments[1])
    case ("snapshot", _): result = try snapshot(Array(arguments.dropFirst()))
    case ("cpu", 3...): result = try cpu(before: arguments[1], after: arguments[2], perf: Array(arguments.dropFirst(3)))
    case ("glitches", 2):
        print(try glitches(arguments[1]))
        exit(0)
    default:
        FileHandle.standardError.write(
            Data(
                "usage: tutti-bench-analyze impulse RAW META | stats JSONL [PROBE] | iostat LOG | snapshot NAME=PID[,PID...]... | cpu BEFORE AFTER [NAME=SECONDS:PERFCSV...] | glitches RESULT\n"
                    .utf8))
        exit(2)
    }
    print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("tutti-bench-analyze: \(error)\n".utf8))
    exit(1)
}
