#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TuttiClock
import TuttiIO

/// `tutti clock --serve`: a beat-clock peer driven by JSON commands on stdin and reporting JSON lines on
/// stdout, with the same protocol as the lab's real-Link peer (`scripts/link/aalink_peer.py`), so the two
/// can take each other's place in the interop and agreement tests.
///
/// Commands: state, tempo (bpm), start, stop, quantum (q), sample (every_ms), log_changes (on), quit, kill.
/// Lines: hello, sample/state {t, dt, beat, phase, quantum, tempo, peers, playing}, change {what, value,
/// old, t, tprev}, ack {cmd, t0, t1}, bye, error. `t` is CLOCK_MONOTONIC in nanoseconds.
final class ClockServeMode: @unchecked Sendable {
    private let link: LinkService
    private let name: String
    private let quantum = Mutex<Double>(4)
    private let sampleEvery = Atomic<Int>(0)
    private let logChanges = Atomic<Bool>(false)
    private let output = Mutex<Void>(())
    private let running = Atomic<Bool>(true)

    init(link: LinkService, name: String, quantum: Double, sampleEveryMilliseconds: Int, logChanges: Bool) {
        self.link = link
        self.name = name
        self.quantum.withLock { $0 = quantum }
        sampleEvery.store(sampleEveryMilliseconds, ordering: .relaxed)
        self.logChanges.store(logChanges, ordering: .relaxed)
    }

    private static func monotonicNanoseconds() -> Int64 { MonotonicClock().now().nanoseconds }

    private func emit(_ fields: [String: String]) {
        var all = fields
        all["src"] = "\"\(name)\""
        if all["t"] == nil { all["t"] = String(Self.monotonicNanoseconds()) }
        let line = "{" + all.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}\n"
        output.withLock { _ in
            // One write per line, so lines from the sampler and the command loop never interleave.
            _ = line.withCString { system_write(1, $0, strlen($0)) }
        }
    }

    /// One sample, bracketed by two CLOCK_MONOTONIC reads (t = midpoint, dt = bracket).
    private func sample(_ event: String) {
        let q = quantum.withLock { $0 }
        let before = Self.monotonicNanoseconds()
        let host = link.hostMicroseconds
        let state = link.snapshot
        let after = Self.monotonicNanoseconds()
        let beats = state.clock.beats(atHostTime: host)
        let phase = state.clock.phase(atHostTime: host, quantum: Beats(q))
        emit([
            "ev": "\"\(event)\"", "t": String((before + after) / 2), "dt": String(after - before), "beat": String(beats.value),
            "phase": String(phase.value), "quantum": String(q), "tempo": String(state.clock.timeline.tempo.bpm),
            "peers": String(state.peerCount), "playing": state.startStop.isPlaying ? "true" : "false",
        ])
    }

    func run() async {
        // What changes are reported against: the state before `hello`, with no peer counted (the service
        // started alone). The monitor task below may start tens of ms later on a loaded machine; a peer
        // found in the meantime must still be reported (the lab missed a 0 -> 2 change that way).
        let baseline = {
            var alone = link.snapshot
            alone.peerCount = 0
            return alone
        }()
        let baselineTime = Self.monotonicNanoseconds()
        emit([
            "ev": "\"hello\"", "pid": String(system_getpid()), "clock": "\"CLOCK_MONOTONIC\"", "quantum": String(quantum.withLock { $0 }),
        ])
        let commands = AsyncStream<String> { continuation in
            let reader = OSThread(name: "tutti-stdin") {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
            _ = reader
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                while running.load(ordering: .relaxed) {
                    let every = sampleEvery.load(ordering: .relaxed)
                    try? await Task.sleep(for: .milliseconds(every > 0 ? every : 20))
                    if every > 0 { sample("sample") }
                }
            }
            group.addTask { [self] in
                var last = baseline
                var lastTime = baselineTime
                while running.load(ordering: .relaxed) {
                    try? await Task.sleep(for: .milliseconds(1))
                    let now = Self.monotonicNanoseconds()
                    let current = link.snapshot
                    if logChanges.load(ordering: .relaxed) {
                        let t = String(now)
                        let previous = String(lastTime)
                        if current.clock.timeline.tempo != last.clock.timeline.tempo {
                            emit([
                                "ev": "\"change\"", "what": "\"tempo\"", "value": String(current.clock.timeline.tempo.bpm),
                                "old": String(last.clock.timeline.tempo.bpm), "t": t, "tprev": previous,
                            ])
                        }
                        if current.peerCount != last.peerCount {
                            emit([
                                "ev": "\"change\"", "what": "\"peers\"", "value": String(current.peerCount),
                                "old": String(last.peerCount), "t": t, "tprev": previous,
                            ])
                        }
                        if current.startStop.isPlaying != last.startStop.isPlaying {
                            emit([
                                "ev": "\"change\"", "what": "\"playing\"", "value": current.startStop.isPlaying ? "true" : "false",
                                "old": last.startStop.isPlaying ? "true" : "false", "t": t, "tprev": previous,
                            ])
                        }
                    }
                    last = current
                    lastTime = now
                }
            }
            for await line in commands {
                if !handle(line) { break }
            }
            running.store(false, ordering: .relaxed)
            group.cancelAll()
        }
        link.stop()
        emit(["ev": "\"bye\"", "t_disable": String(Self.monotonicNanoseconds())])
    }

    /// Handles one command line; returns false to quit.
    private func handle(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return true }
        var command: [String: Any] = [:]
        if trimmed.hasPrefix("{") {
            guard let data = trimmed.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                object["cmd"] is String
            else {
                emit(["ev": "\"error\"", "message": "\"not a command: \(trimmed.prefix(60).replacingOccurrences(of: "\"", with: "'"))\""])
                return true
            }
            command = object
        } else {
            let words = trimmed.split(separator: " ")
            command["cmd"] = String(words[0])
            if words.count > 1, let value = Double(words[1]) {
                command["bpm"] = value
                command["q"] = value
                command["every_ms"] = value
            }
        }
        let name = command["cmd"] as! String
        let id = (command["id"]).map { "\($0)" }
        func number(_ key: String) -> Double? { (command[key] as? NSNumber)?.doubleValue ?? (command[key] as? Double) }
        let t0 = Self.monotonicNanoseconds()
        switch name {
        case "state":
            sample("state")
            return true
        case "tempo":
            guard let bpm = number("bpm"), bpm >= 20, bpm <= 999 else { return error("tempo needs bpm between 20 and 999") }
            link.setTempo(Tempo(bpm: bpm))
        case "start": link.setPlaying(true)
        case "stop": link.setPlaying(false)
        case "quantum":
            guard let q = number("q"), q > 0 else { return error("quantum needs q > 0") }
            quantum.withLock { $0 = q }
        case "sample":
            sampleEvery.store(Int(number("every_ms") ?? 0), ordering: .relaxed)
        case "log_changes":
            logChanges.store((command["on"] as? Bool) ?? true, ordering: .relaxed)
        case "quit":
            emit(["ev": "\"ack\"", "cmd": "\"quit\"", "t0": String(t0), "t1": String(Self.monotonicNanoseconds())])
            return false
        case "kill":
            emit(["ev": "\"ack\"", "cmd": "\"kill\"", "pid": String(system_getpid()), "t0": String(t0), "t1": String(t0)])
            system_kill(system_getpid(), SIGKILL)
        default:
            return error("unknown command '\(name)'")
        }
        var ack = ["ev": "\"ack\"", "cmd": "\"\(name)\"", "t0": String(t0), "t1": String(Self.monotonicNanoseconds())]
        if let id { ack["id"] = id }
        emit(ack)
        return true
    }

    private func error(_ message: String) -> Bool {
        emit(["ev": "\"error\"", "message": "\"\(message)\""])
        return true
    }
}
