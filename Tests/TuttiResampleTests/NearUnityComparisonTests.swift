import Foundation
import TuttiResample
import XCTest

/// The comparison behind `NearUnityLibrary.recommended`: every candidate drift resampler and the libsamplerate
/// baseline, measured in one run by `measureDriftResampler`, printed as the Markdown table recorded in
/// `Benchmarks/results/resampler-comparison.md` (the cost per period comes from `Benchmarks/MediaPath`).
///
/// Run: `swift test --skip-build --filter NearUnityComparisonTests 2>&1 | grep '^|'`
final class NearUnityComparisonTests: XCTestCase {
    static let candidates: [Resampler.Mode] = [
        .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .zitaVResampler(halfLength: 16)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .zitaVResampler(halfLength: 24)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .zitaVResampler(halfLength: 32)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .speexDSP(quality: 3)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .speexDSP(quality: 5)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .speexDSP(quality: 7)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .polyphase(halfLength: 16)),
        .nearUnityDrift(maximumCorrectionPPM: 1_000, library: .polyphase(halfLength: 24)),
    ]

    /// Every candidate meets the frame contract (delay as reported within a frame, accounting within a frame per
    /// second); the table is printed for the record; the recommended library meets the −90 dB bound.
    func testCompareNearUnityCandidates() throws {
        print(
            "| engine | delay reported (frames) | delay measured (frames) | THD+N 1 kHz ±200 ppm (dB) "
                + "| THD+N 10 kHz ±200 ppm (dB) | ratio-jump step excess | accounting error (frames / s) |")
        print("|---|---|---|---|---|---|---|")
        for mode in Self.candidates {
            let figures = try measureDriftResampler(mode)
            print(
                "| \(figures.engine) | \(format(figures.reportedDelayFrames)) | "
                    + "\(format(figures.measuredDelayFrames)) | \(format(figures.thdPlusNoise1kHz)) | "
                    + "\(format(figures.thdPlusNoise10kHz)) | \(String(format: "%.1e", figures.stepExcess)) | "
                    + "\(format(figures.accountingErrorFrames)) |")
            XCTAssertLessThanOrEqual(figures.worstDelayErrorFrames, 1, figures.engine)
            XCTAssertLessThanOrEqual(figures.accountingErrorFrames, 1, figures.engine)
        }
    }

    private func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
