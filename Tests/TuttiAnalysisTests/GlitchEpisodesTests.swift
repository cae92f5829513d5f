// GlitchEpisodes: a stream's glitches grouped into episodes and set beside the late wake-ups around them.

import TuttiAnalysis
import XCTest

final class GlitchEpisodesTests: XCTestCase {
    /// Samples every 0.1 s from t = 100 s, with the cumulative counters given per sample.
    private func series(glitches: [Int], sender: [Int], receiver: [Int]) -> [GlitchEpisodes.Sample] {
        (0..<glitches.count).map { k in
            .init(time: 100 + Double(k) / 10, glitches: glitches[k], senderLateWakes: sender[k], receiverLateWakes: receiver[k])
        }
    }

    func testEpisodesAreSplitByQuietGapsAndSetBesideEachClocksLateWakes() {
        // Glitches at samples 2-3 (one episode: 3 then 2 more), and at 9 (a second, 0.6 s later).
        // The sender's clock woke late before the first, the receiver's never; nothing came with the second.
        let samples = series(
            glitches: [0, 0, 3, 5, 5, 5, 5, 5, 5, 7, 7, 7],
            sender: [0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
            receiver: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        let result = GlitchEpisodes(samples: samples)
        XCTAssertEqual(result.episodes.count, 2)
        let first = result.episodes[0]
        let second = result.episodes[1]
        XCTAssertEqual(first.glitches, 5)
        XCTAssertEqual(first.start, 0.2, accuracy: 1e-9)
        XCTAssertEqual(first.seconds, 0.1, accuracy: 1e-9)
        // The wake-up between samples 1 and 2 came with it; the one between 0 and 1 came before its span.
        XCTAssertEqual(first.senderLateWakes, 1)
        XCTAssertEqual(first.receiverLateWakes, 0)
        XCTAssertEqual(second.glitches, 2)
        XCTAssertEqual(second.start, 0.9, accuracy: 1e-9)
        XCTAssertEqual(second.senderLateWakes, 0)
        XCTAssertEqual(result.withPeerLateWake, 1)
        XCTAssertEqual(result.unexplained, 1)
        XCTAssertEqual(result.senderLateWakes, 2)
        XCTAssertEqual(result.receiverLateWakes, 0)
    }

    func testTheProbesLateWakesExplainAnEpisodeOnlyWithinItsSpan() {
        let samples = series(
            glitches: [0, 0, 0, 4, 4, 4, 4, 4, 9, 9],
            sender: [Int](repeating: 0, count: 10), receiver: [Int](repeating: 0, count: 10))
        // One probe wake-up inside the first episode's span (100.2...100.3), one long before both, one after.
        let probe: [GlitchEpisodes.ProbeWake] = [
            .init(time: 100.25, microseconds: 1800), .init(time: 99.0, microseconds: 5000), .init(time: 100.85, microseconds: 700),
        ]
        let result = GlitchEpisodes(samples: samples, probeLateWakes: probe)
        XCTAssertEqual(result.episodes.map(\.glitches), [4, 5])
        XCTAssertEqual(result.episodes[0].probeLateWakes, 1)
        XCTAssertEqual(result.episodes[0].probeWorstMicroseconds, 1800)
        XCTAssertEqual(result.episodes[1].probeLateWakes, 0)
        XCTAssertEqual(result.withProbeLateWake, 1)
        XCTAssertEqual(result.withPeerLateWake, 0)
        XCTAssertEqual(result.unexplained, 1)
        // The run's own probe count leaves out what came before its first sample.
        XCTAssertEqual(result.probeLateWakes, 2)
    }

    func testStolenTimeAndPinnedProbesExplainAnEpisodeAsTheMachines() {
        // Three episodes: at samples 2-3 (span 100.1...100.3), 7 (100.6...100.7) and 12 (101.1...101.2).
        let samples = series(
            glitches: [0, 0, 2, 4, 4, 4, 4, 6, 6, 6, 6, 6, 8, 8],
            sender: [0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2], receiver: [Int](repeating: 0, count: 14))
        // The first: CPU 1's probe woke late twice and CPU 0's once. The second: stolen time read 0.05 s after
        // its span (within the margin). The third: stolen time read 0.3 s after it (outside), and nothing else.
        let probe: [GlitchEpisodes.ProbeWake] = [
            .init(time: 100.15, microseconds: 900, cpu: 1), .init(time: 100.2, microseconds: 2500, cpu: 1),
            .init(time: 100.25, microseconds: 700, cpu: 0),
        ]
        let steal: [GlitchEpisodes.Steal] = [
            .init(time: 100.75, cpu: 0, milliseconds: 10), .init(time: 101.5, cpu: 1, milliseconds: 20),
        ]
        let result = GlitchEpisodes(samples: samples, probeLateWakes: probe, steal: steal)
        XCTAssertEqual(result.episodes.map(\.glitches), [4, 2, 2])
        XCTAssertEqual(result.episodes.map(\.probeCPUs), [[0, 1], [], []])
        XCTAssertEqual(result.episodes[0].probeWorstMicroseconds, 2500)
        XCTAssertEqual(result.episodes.map(\.stealMilliseconds), [0, 10, 0])
        XCTAssertEqual(result.withProbeLateWake, 1)
        XCTAssertEqual(result.withSteal, 1)
        XCTAssertEqual(result.withMachineEvidence, 2)
        XCTAssertEqual(result.withPeerLateWake, 2)
        // The third had no late wake-up of any clock or probe, and its stolen time came after it.
        XCTAssertEqual(result.unexplained, 1)
        XCTAssertEqual(result.stealMilliseconds, 10, "the read at 101.5 s lies after the last sample (101.3 s)")
    }

    func testARestartedCounterStartsANewBaselineAndACleanRunHasNoEpisodes() {
        let restarted = series(glitches: [10, 10, 2, 2], sender: [5, 5, 0, 1], receiver: [0, 0, 0, 0])
        let result = GlitchEpisodes(samples: restarted)
        XCTAssertEqual(result.episodes.map(\.glitches), [2])
        XCTAssertEqual(result.senderLateWakes, 1)
        let clean = GlitchEpisodes(samples: series(glitches: [3, 3, 3], sender: [1, 4, 4], receiver: [0, 0, 0]))
        XCTAssertTrue(clean.episodes.isEmpty)
        XCTAssertEqual(clean.senderLateWakes, 3)
        XCTAssertEqual(GlitchEpisodes(samples: []).episodes, [])
    }
}
