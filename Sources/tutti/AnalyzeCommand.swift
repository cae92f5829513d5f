import ArgumentParser
import Foundation
import TuttiAnalysis
import TuttiIO

struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Report what a recording of a steady tone shows: frequency, level, gaps and clicks.",
        discussion: """
            Checks a received WAV file: the tone's frequency, its active span, every silent gap (concealed
            loss) and every discontinuity (click). With --reference, also finds where the recording starts in
            the file that was sent and counts samples that differ. --level-hz measures how loud a frequency is
            in the channel (a track's crosstalk: another track's tone in it); --clicks finds the clicks of every
            channel (the click source) and how far each channel's lie from the --channel's, in frames (tracks
            recorded separately line up when every offset is 0).
            """)

    @Argument(help: "The WAV file to analyse.")
    var file: String

    @Option(help: ArgumentHelp("The WAV file that was sent, to compare sample by sample.", valueName: "FILE"))
    var reference: String?

    @Option(help: ArgumentHelp("Frames per packet, to count gaps in packets.", valueName: "FRAMES"))
    var packetFrames: Int = 64

    @Option(
        help: ArgumentHelp(
            "Leave the first SECONDS after the tone starts out of the gap, click and level figures (a receiver's start-up).",
            valueName: "SECONDS")
    )
    var settle: Double = 0

    @Option(
        name: .customLong("ignore-tail"),
        help: ArgumentHelp(
            "Leave the last SECONDS of the file out (e.g. what a receiver concealed after the stream ended).", valueName: "SECONDS"))
    var ignoreTail: Double = 0

    @Option(
        name: .customLong("tone-hz"),
        help: ArgumentHelp(
            "Also count damaged 64-frame blocks of a sine of HZ (a least-squares fit per block), from --settle after the tone starts.",
            valueName: "HZ"))
    var toneHz: Double?

    @Option(help: ArgumentHelp("With --tone-hz: count damaged blocks over SECONDS only.", valueName: "SECONDS"))
    var window: Double?

    @Option(help: "Channel to analyse (0-based).")
    var channel: Int = 0

    @Option(
        name: .customLong("level-hz"),
        help: ArgumentHelp("Also report the level of a sine of HZ in the channel, in dB of full scale (repeatable).", valueName: "HZ"))
    var levelHz: [Double] = []

    @Flag(help: "Also find the clicks of every channel and their offsets to the --channel's clicks.")
    var clicks = false

    @Flag(help: "Print JSON.")
    var json = false

    struct Result: Codable {
        var file: String
        var report: ToneReport
        var missingPackets: Int
        var referenceOffset: Int?
        var comparedSamples: Int?
        var differingSamples: Int?
        /// With --tone-hz: the damaged blocks (ToneDamage) and the frames they were counted over.
        var toneDamage: ToneDamage?
        var damageStartFrame: Int?
        var damageFrames: Int?
        /// With --level-hz: each frequency's level, dB of full scale (SineLevel), keyed by the frequency as given.
        var levels: [String: Double]?
        /// With --clicks: every channel's clicks and offsets to the --channel's.
        var clickAlignment: ClickAlignment?
    }

    func run() async throws {
        try await reportingErrors {
            let audio: WAVAudio
            do { audio = try WAVAudio.read(path: file) } catch { throw CLIError("cannot read \(error)") }
            guard channel >= 0, channel < audio.channels else { throw CLIError("\(file) has \(audio.channels) channels") }
            guard ignoreTail >= 0, ignoreTail < 3600 else { throw CLIError("--ignore-tail must be between 0 and 3600 seconds") }
            let samples = Array(audio.channel(channel).dropLast(Int(ignoreTail * Double(audio.sampleRate))))
            guard settle >= 0, settle < 3600 else { throw CLIError("--settle must be between 0 and 3600 seconds") }
            let report = ToneAnalysis.analyze(samples, sampleRate: audio.sampleRate, settleFrames: Int(settle * Double(audio.sampleRate)))
            var result = Result(file: file, report: report, missingPackets: report.missingPackets(packetFrames: packetFrames))
            if let toneHz {
                guard toneHz > 0, toneHz < Double(audio.sampleRate) / 2 else {
                    throw CLIError("--tone-hz must be above 0 and below half the sample rate (\(audio.sampleRate / 2) Hz)")
                }
                guard window.map({ $0 > 0 && $0 < 3600 }) ?? true else { throw CLIError("--window must be between 0 and 3600 seconds") }
                let start = (report.activeStart ?? samples.count) + Int(settle * Double(audio.sampleRate))
                let end = window.map { min(samples.count, start + Int($0 * Double(audio.sampleRate))) } ?? samples.count
                result.toneDamage = ToneDamage.measure(samples, sampleRate: audio.sampleRate, frequency: toneHz, from: start, to: end)
                result.damageStartFrame = start
                result.damageFrames = max(0, end - start)
            } else if window != nil {
                throw CLIError("--window goes with --tone-hz")
            }
            if !levelHz.isEmpty {
                var levels: [String: Double] = [:]
                let active = samples[min(samples.count, (report.activeStart ?? 0) + Int(settle * Double(audio.sampleRate)))...]
                for hz in levelHz {
                    guard hz > 0, hz < Double(audio.sampleRate) / 2 else {
                        throw CLIError("--level-hz must be above 0 and below half the sample rate (\(audio.sampleRate / 2) Hz)")
                    }
                    levels[fixed(hz, hz.rounded() == hz ? 0 : 2)] = SineLevel.decibels(of: hz, in: active, sampleRate: audio.sampleRate)
                }
                result.levels = levels
            }
            if clicks {
                result.clickAlignment = ClickAlignment(
                    channels: (0..<audio.channels).map { audio.channel($0) }, referenceChannel: channel,
                    minimumGapFrames: max(2, audio.sampleRate / 20))
            }
            if let reference {
                let sent: WAVAudio
                do { sent = try WAVAudio.read(path: reference) } catch { throw CLIError("cannot read \(error)") }
                if let comparison = ToneAnalysis.compare(recording: samples, reference: sent.channel(min(channel, sent.channels - 1))) {
                    result.referenceOffset = comparison.offset
                    result.comparedSamples = comparison.compared
                    result.differingSamples = comparison.differing
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(result), as: UTF8.self))
                return
            }
            print("\(file): \(audio.frames) frames at \(audio.sampleRate) Hz, \(audio.channels) channel(s)")
            print(
                "  tone \(fixed(report.frequency)) Hz, rms \(fixed(report.rms, 4)), peak \(fixed(report.peak, 4)), active \(fixed(report.activeSeconds, 3)) s"
            )
            print(
                "  gaps \(report.gaps.count) (\(report.gapFrames) frames ≈ \(result.missingPackets) packets of \(packetFrames)), discontinuities \(report.discontinuities)"
            )
            print("  largest step \(fixed(report.largestStepRatio, 3))× the tone's own, \(report.stepsAboveTone) steps above it")
            if let damage = result.toneDamage {
                print(
                    "  damaged \(damage.damagedBlocks ?? 0) of \(damage.toneBlocks) blocks of 64 frames (\(fixed(damage.damagedMs ?? 0, 1)) ms)"
                )
            }
            for (hz, level) in (result.levels ?? [:]).sorted(by: { Double($0.key)! < Double($1.key)! }) {
                print("  level of \(hz) Hz: \(fixed(level, 1)) dB of full scale")
            }
            for channel in result.clickAlignment?.channels ?? [] {
                let offsets =
                    channel.minimumOffset.map { "offset to channel \(self.channel) \($0)…\(channel.maximumOffset!) frames" }
                    ?? "none matched"
                print("  channel \(channel.channel): \(channel.clickFrames.count) clicks, \(offsets), \(channel.unmatched) unmatched")
            }
            if reference != nil {
                if let compared = result.comparedSamples, let differing = result.differingSamples {
                    print("  vs reference: \(compared) samples compared from offset \(result.referenceOffset!), \(differing) differ")
                } else {
                    print("  vs reference: recording not found in the reference")
                }
            }
        }
    }
}
