#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import TuttiClock
import TuttiIO

struct ClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Join the shared beat clock (Ableton Link's protocol) and show it live, or change it.",
        discussion: """
            Tutti's beat clock speaks Ableton Link's own protocol: this command joins the Link session on this
            network as a Link peer (with Ableton Live, Bitwig, AUM and any other Link app, and with every tutti
            peer), applies --tempo/--start/--stop, and shows peers, tempo, beat, phase and the
            transport, refreshed in place. Phase is session beats modulo --quantum, as every Link app shows it.
            With --json, prints one JSON object per sample (JSON Lines), with "t" the CLOCK_MONOTONIC time in
            nanoseconds at which it was taken.
            """)

    @Option(help: ArgumentHelp("Set the session tempo (20–999 bpm).", valueName: "BPM"))
    var tempo: Double?

    @Flag(help: "Start the session's transport.")
    var start = false

    @Flag(help: "Stop the session's transport.")
    var stop = false

    @Option(help: ArgumentHelp("Beats per phase cycle (e.g. 4 for a 4/4 bar).", valueName: "BEATS"))
    var quantum: Double = 4

    @Option(
        name: .customLong("interface"), help: ArgumentHelp("Run Link on this interface only (repeatable; default: all).", valueName: "NAME")
    )
    var interfaces: [String] = []

    @Option(help: ArgumentHelp("Seconds to wait for the session before applying changes.", valueName: "SECONDS"))
    var settle: Double = 1

    @Flag(help: "Print JSON Lines instead of a live display.")
    var json = false

    @Option(help: ArgumentHelp("Seconds between samples.", valueName: "SECONDS"))
    var interval: Double = 0.25

    @Option(help: "Stop after this many samples (default: until Ctrl-C; 1 with --json; 0 to apply changes and exit).")
    var count: Int?

    @Flag(
        help:
            "Serve: take JSON commands on stdin (state, tempo, start, stop, quantum, sample, log_changes, quit, kill) and print JSON lines, as the lab's Link test peer does."
    )
    var serve = false

    @Option(help: ArgumentHelp("Name in --serve output lines.", valueName: "NAME"))
    var name = "tutti"

    @Option(
        name: .customLong("sample-every"),
        help: ArgumentHelp("--serve: print a sample every MS milliseconds from the start.", valueName: "MS"))
    var sampleEvery = 0

    @Flag(name: .customLong("log-changes"), help: "--serve: print a line whenever tempo, peer count or transport changes.")
    var logChanges = false

    func validate() throws {
        if let tempo, !(tempo >= 20 && tempo <= 999) { throw ValidationError("--tempo must be between 20 and 999 bpm") }
        if start && stop { throw ValidationError("--start and --stop exclude each other") }
        if !(quantum > 0 && quantum <= 64) { throw ValidationError("--quantum must be between 0 and 64 beats") }
        if !(interval >= 0.001 && interval <= 3600) { throw ValidationError("--interval must be between 0.001 and 3600 seconds") }
        if !(settle >= 0 && settle <= 30) { throw ValidationError("--settle must be between 0 and 30 seconds") }
    }

    func run() async throws {
        try await reportingErrors {
            var configuration = LinkConfiguration()
            configuration.interfaces = interfaces.isEmpty ? nil : interfaces
            let link: LinkService
            do { link = try LinkService(configuration: configuration) } catch { throw CLIError("cannot join Link: \(error)") }
            link.start()
            defer { link.stop() }
            if serve {
                await ClockServeMode(
                    link: link, name: name, quantum: quantum, sampleEveryMilliseconds: sampleEvery, logChanges: logChanges
                ).run()
                return
            }
            let changes = tempo != nil || start || stop
            if changes {
                // Join the running session first, so the change applies to it rather than to our own.
                try await Task.sleep(for: .milliseconds(Int64(settle * 1000)))
                if let tempo { link.setTempo(Tempo(bpm: tempo)) }
                if start { link.setPlaying(true) }
                if stop { link.setPlaying(false) }
                try await Task.sleep(for: .milliseconds(100))
            }
            let samples = count ?? (json ? 1 : Int.max)
            let quantumBeats = Beats(quantum)
            let interactive = system_isatty(1) == 1 && !json
            for index in 0..<samples {
                if index > 0 || (!changes && json) { try await Task.sleep(for: .milliseconds(Int64(interval * 1000))) }
                let host = link.hostMicroseconds
                let state = link.snapshot
                let beats = state.clock.beats(atHostTime: host)
                let phase = state.clock.phase(atHostTime: host, quantum: quantumBeats)
                if json {
                    print(
                        "{\"t\":\(host * 1000),\"peers\":\(state.peerCount),\"tempo\":\(state.clock.timeline.tempo.bpm),\"beat\":\(beats.value),\"phase\":\(phase.value),\"quantum\":\(quantum),\"playing\":\(state.startStop.isPlaying),\"session\":\"\(String(state.sessionID.rawValue, radix: 16))\"}"
                    )
                } else {
                    if interactive { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                    let bar =
                        String(repeating: "■", count: Int(phase.value))
                        + String(repeating: "□", count: max(0, Int(quantum.rounded(.up)) - Int(phase.value)))
                    print("Link session \(state.sessionID)  peers \(state.peerCount)  on \(link.interfaceNames.joined(separator: ", "))")
                    print(
                        "tempo \(fixed(state.clock.timeline.tempo.bpm, 2)) bpm   beat \(fixed(beats.value, 3))   phase \(fixed(phase.value, 3))/\(fixed(quantum, 0))  \(bar)   \(state.startStop.isPlaying ? "playing" : "stopped")"
                    )
                }
                flushStandardOutput()
            }
        }
    }
}
