#if canImport(Glibc)
import Glibc
#endif
@testable import TuttiEngine
import TuttiStream
import XCTest

/// The pure rules of a receiver's takes and failures: file names, where they go, and the state a failed
/// output gives its connections.
final class TakeNamingTests: XCTestCase {
    func testTheFirstTakeKeepsTheConfiguredNameAndLaterOnesAreNumberedBeforeTheExtension() {
        let cases: [(String, [String])] = [
            ("foh.wav", ["foh.wav", "foh-2.wav", "foh-3.wav", "foh-10.wav"]),
            ("/rec/night.take.wav", ["/rec/night.take.wav", "/rec/night.take-2.wav", "/rec/night.take-3.wav", "/rec/night.take-10.wav"]),
            ("takes.d/foh", ["takes.d/foh", "takes.d/foh-2", "takes.d/foh-3", "takes.d/foh-10"]),
            (".wav", [".wav", ".wav-2", ".wav-3", ".wav-10"]),
            ("dir/.hidden", ["dir/.hidden", "dir/.hidden-2", "dir/.hidden-3", "dir/.hidden-10"]),
        ]
        for (path, expected) in cases {
            let naming = TakeNaming(path: path)
            XCTAssertEqual([1, 2, 3, 10].map(naming.path(ofTake:)), expected, path)
        }
    }

    func testAFilePerTrackPutsTheTrackAfterTheTakeBeforeTheExtension() {
        XCTAssertEqual(TakeNaming(path: "foh.wav").path(ofTake: 1, track: 1), "foh-track1.wav")
        XCTAssertEqual(TakeNaming(path: "foh.wav").path(ofTake: 3, track: 12), "foh-3-track12.wav")
        XCTAssertEqual(TakeNaming(path: "takes.d/foh").path(ofTake: 2, track: 2), "takes.d/foh-2-track2")
        XCTAssertEqual(TakeNaming(path: "/rec/night.take.wav").path(ofTake: 1, track: 2), "/rec/night.take-track2.wav")
    }

    func testCandidatesStartAfterTheLastTakeAndAreBounded() {
        let naming = TakeNaming(path: "foh.wav")
        XCTAssertEqual(naming.candidates(after: 0).first, 1)
        XCTAssertEqual(naming.candidates(after: 4).first, 5)
        XCTAssertEqual(naming.candidates(after: 4).last, TakeNaming.maximumTakes)
        XCTAssertEqual(naming.candidates(after: TakeNaming.maximumTakes).count, 1, "never an empty or inverted range")
    }

    func testTheDirectoryIsThePathUpToItsLastSlash() {
        XCTAssertEqual(TakeNaming(path: "foh.wav").directory, ".")
        XCTAssertEqual(TakeNaming(path: "/foh.wav").directory, "/")
        XCTAssertEqual(TakeNaming(path: "/a/b.c/foh.wav").directory, "/a/b.c")
        XCTAssertEqual(TakeNaming(path: "rec/foh.wav").directory, "rec")
        for path in ["", "rec/", "/", ".", "rec/..", "rec/."] {
            XCTAssertTrue(TakeNaming(path: path).isDirectoryPath, path)
        }
        for path in ["foh.wav", "rec/foh", "..wav", "/x/.wav"] {
            XCTAssertFalse(TakeNaming(path: path).isDirectoryPath, path)
        }
    }

    func testAFailedOutputOverridesEveryStreamState() {
        let streams: [JitterBufferState] = [.idle, .buffering, .playing, .lost]
        XCTAssertEqual(streams.map { ReceiveConnection.state(stream: $0, outputFailed: false) }, [.buffering, .buffering, .playing, .lost])
        XCTAssertEqual(streams.map { ReceiveConnection.state(stream: $0, outputFailed: true) }, [.failed, .failed, .failed, .failed])
    }

    func testAFailureIsReportedOnceWithWhatFailedAndTheFirstErrorWins() {
        let failure = SinkFailure(target: .file(path: "rec/foh-2.wav"))
        XCTAssertFalse(failure.hasFailed)
        XCTAssertNil(failure.reason)
        XCTAssertNil(failure.claimReport(), "nothing to report before a failure")
        failure.record(errno: ENOSPC)
        failure.record(errno: EIO)
        XCTAssertEqual(failure.reason, "cannot write rec/foh-2.wav: No space left on device; recording stopped")
        XCTAssertEqual(failure.claimReport(), failure.reason)
        XCTAssertNil(failure.claimReport(), "reported once")
        XCTAssertTrue(failure.hasFailed)
    }

    func testAClosedPipeSaysTheReaderHasExited() {
        XCTAssertEqual(
            SinkFailure.reason(writing: .standardOutput, errno: EPIPE),
            "standard output is closed (the program reading it has exited: Broken pipe); nothing is played")
        XCTAssertEqual(
            SinkFailure.reason(writing: .standardOutput, errno: EIO),
            "cannot write to standard output: Input/output error; nothing is played")
    }

    func testOnlyWavAndNullPortsRecordTakes() {
        XCTAssertTrue(ReceiverPort.recordsTakes(.wavFile(path: "foh.wav")))
        XCTAssertTrue(ReceiverPort.recordsTakes(.null))
        XCTAssertFalse(ReceiverPort.recordsTakes(.standardOutput(encoding: .s16le)))
        XCTAssertFalse(ReceiverPort.recordsTakes(.jack(connect: nil)))
    }
}
