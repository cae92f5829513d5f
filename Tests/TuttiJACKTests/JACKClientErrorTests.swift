import TuttiJACK
import XCTest

/// The JACK client's refusals that need no running server.
final class JACKClientErrorTests: XCTestCase {
    func testNoServerIsATypedErrorSayingHowToStartOne() {
        let server = "tutti-absent-\(UInt32.random(in: 0 ... .max))"
        do {
            _ = try JACKClient(name: "tutti-test", serverName: server)
            XCTFail("a client opened on a server that does not exist")
        } catch {
            XCTAssertEqual(error.code, .serverUnavailable)
            XCTAssertEqual(
                error.message,
                "no JACK server '\(server)' is running: start one first, e.g. 'jackd -n \(server) -d alsa' or 'jackd -n \(server) -d dummy -r 48000 -p 64'"
            )
            XCTAssertFalse(error.message.contains("\n"))
        }
    }
}
