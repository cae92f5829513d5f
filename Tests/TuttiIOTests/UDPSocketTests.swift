import TuttiCore
import TuttiIO
import XCTest

/// Media sockets on loopback: dual-stack sockets reach IPv4 and IPv6 destinations.
final class UDPSocketTests: XCTestCase {
    func testDatagramsReachTheReceiverOverIPv4AndIPv6Loopback() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        defer {
            receiver.close()
            sender.close()
        }
        XCTAssertNotEqual(receiver.localPort, 0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        for host in ["127.0.0.1", "::1"] where host == "127.0.0.1" || receiver.isDualStack {
            let destination = sender.destination(try UDPAddress(host: host, port: receiver.localPort))
            let message: [UInt8] = Array("hello \(host)".utf8)
            XCTAssertTrue(message.withUnsafeBytes { sender.send($0, to: destination) })
            let length = receiver.receive(into: buffer, timeoutMilliseconds: 2000)
            XCTAssertEqual(length, message.count, host)
            XCTAssertEqual(Array(buffer[0..<(length ?? 0)]), message, host)
        }
    }

    func testReceiveTimesOutWithNil() throws {
        let socket = try UDPSocket()
        defer { socket.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { buffer.deallocate() }
        XCTAssertNil(socket.receive(into: buffer, timeoutMilliseconds: 10))
    }

    func testOversizedDatagramsReportTheirFullLength() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        defer {
            receiver.close()
            sender.close()
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { buffer.deallocate() }
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        let message = [UInt8](repeating: 7, count: 100)
        _ = message.withUnsafeBytes { sender.send($0, to: destination) }
        // Longer than the buffer: the caller sees 100 and can reject it rather than read a truncated packet.
        XCTAssertEqual(receiver.receive(into: buffer, timeoutMilliseconds: 2000), 100)
    }
}
