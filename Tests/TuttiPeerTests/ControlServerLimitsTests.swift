#if canImport(Glibc)
import Glibc
#endif
import Logging
@testable import TuttiPeer
import TuttiWire
import XCTest

/// The control server under `ControlLimits` on real loopback sockets (one address, 127.0.0.1): connections
/// beyond an address's share are closed unread, an idle connection and a frame sent too slowly are closed at the
/// timeout, a request too large is refused, requests over the rate are answered `busy`; a well-behaved request
/// is still answered after all of it, and each refusal is counted once.
final class ControlServerLimitsTests: XCTestCase {
    private func startServer(_ limits: ControlLimits) async throws -> (ControlServer, Task<Void, Never>) {
        let server = try await ControlServer(port: 0, addresses: ["127.0.0.1"], limits: limits)
        let serving = Task { _ = try? await server.run(logger: Logger(label: "test")) { _, _ in .done } }
        return (server, serving)
    }

    private func request(_ message: ControlRequest = .describe, id: UInt32 = 1) throws -> [UInt8] {
        try ControlCodec.encodeRequest(ControlEnvelope(id: id, message: message))
    }

    private func send(_ bytes: [UInt8], on descriptor: Int32) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads one length-prefixed answer; nil when the server closed the connection (or 3 s passed).
    private func readResponse(on descriptor: Int32) throws -> ControlResponse? {
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if bytes.count >= 4 {
                let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                if bytes.count >= 4 + length { return try ControlCodec.decodeResponse(Array(bytes[4..<(4 + length)])).message }
            }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            bytes += buffer[0..<count]
        }
    }

    /// Whether the server closed the connection: a read returns end of file (or a reset) within 3 s.
    private func isClosed(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0 || errno == ECONNRESET
    }

    private func waitFor(_ what: String, _ condition: () -> Bool) async {
        let start = ContinuousClock.now
        while !condition(), ContinuousClock.now - start < .seconds(5) { try? await Task.sleep(for: .milliseconds(10)) }
        XCTAssertTrue(condition(), "\(what) within 5 s")
    }

    func testConnectionsBeyondAnAddressShareAreClosedUnread() async throws {
        var limits = ControlLimits()
        limits.connectionsPerSource = 2
        let (server, serving) = try await startServer(limits)
        let first = connectedControlSocket(port: server.port)
        let second = connectedControlSocket(port: server.port)
        await waitFor("two connections admitted") { server.openConnections == 2 }
        let third = connectedControlSocket(port: server.port)
        XCTAssertTrue(isClosed(third), "the third from 127.0.0.1 is closed")
        close(third)
        send(try request(), on: first)
        guard case .done? = try readResponse(on: first) else { return XCTFail("the first still answers") }
        close(first)
        close(second)
        await waitFor("their places given back") { server.openConnections == 0 }
        let again = connectedControlSocket(port: server.port)
        send(try request(), on: again)
        guard case .done? = try readResponse(on: again) else { return XCTFail("a new connection gets in again") }
        close(again)
        XCTAssertEqual(server.refusals.connectionsRefused, 1)
        await server.close()
        await serving.value
    }

    func testAnIdleConnectionAndASlowFrameAreClosedAtTheTimeout() async throws {
        var limits = ControlLimits()
        limits.requestTimeout = .milliseconds(300)
        let (server, serving) = try await startServer(limits)
        let idle = connectedControlSocket(port: server.port)
        let slow = connectedControlSocket(port: server.port)
        let whole = try request()
        send(Array(whole.prefix(6)), on: slow)  // the length and two bytes of the body, then nothing
        let answered = connectedControlSocket(port: server.port)
        send(whole, on: answered)
        guard case .done? = try readResponse(on: answered) else { return XCTFail("a whole request is answered") }
        // The answered connection's clock starts again: it too is closed once it brings nothing more.
        XCTAssertTrue(isClosed(idle), "idle: closed")
        XCTAssertTrue(isClosed(slow), "slow frame: closed")
        XCTAssertTrue(isClosed(answered), "idle after its answer: closed")
        for descriptor in [idle, slow, answered] { close(descriptor) }
        XCTAssertEqual(server.refusals.timedOut, 3)
        await waitFor("no connection left open") { server.openConnections == 0 }
        await server.close()
        await serving.value
    }

    func testARequestLargerThanTheLimitIsRefusedAndItsConnectionClosed() async throws {
        var limits = ControlLimits()
        limits.requestBytes = 1024
        let (server, serving) = try await startServer(limits)
        let client = connectedControlSocket(port: server.port)
        send([0, 0, 0x10, 0x00] + [UInt8](repeating: 0x20, count: 100), on: client)  // says 4096 bytes
        guard case .failure(let failure)? = try readResponse(on: client) else { return XCTFail("a failure answers it") }
        XCTAssertEqual(failure.code, .malformed)
        XCTAssertEqual(failure.message, "control request of 4096 bytes exceeds this peer's limit of 1024")
        XCTAssertTrue(isClosed(client))
        close(client)
        XCTAssertEqual(server.refusals.malformed, 1)
        await server.close()
        await serving.value
    }

    func testRequestsOverTheRateAreAnsweredBusyAndTheConnectionStays() async throws {
        var limits = ControlLimits()
        limits.requestsPerSecond = 0.001  // nothing refills during the test
        limits.burst = 4
        let (server, serving) = try await startServer(limits)
        let client = connectedControlSocket(port: server.port)  // the connection takes one token
        var answers: [String] = []
        for id in 1...5 {
            send(try request(id: UInt32(id)), on: client)
            switch try readResponse(on: client) {
            case .done?: answers.append("done")
            case .failure(let failure)?: answers.append("\(failure.code.rawValue): \(failure.message)")
            case let other: answers.append("\(String(describing: other))")
            }
        }
        XCTAssertEqual(answers.prefix(3), ["done", "done", "done"])
        XCTAssertEqual(
            answers.suffix(2),
            Array(
                repeating: "busy: 127.0.0.1 sent more than 0.001 control requests a second to this peer; slow down and try again", count: 2)
        )
        close(client)
        XCTAssertEqual(server.refusals.rateLimited, 2)
        await server.close()
        await serving.value
    }

    func testAnAddressThatIsNotThisHostsIsRefusedInOneLine() async throws {
        do {
            _ = try await ControlServer(port: 0, addresses: ["198.18.255.254"])
            XCTFail("bound to an address this host does not have")
        } catch {
            XCTAssertEqual(
                error.message,
                "cannot listen on 198.18.255.254: it is not an address of this host; give one of its own with --control-address (see 'ip address')"
            )
        }
    }
}
