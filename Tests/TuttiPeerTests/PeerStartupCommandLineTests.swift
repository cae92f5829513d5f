#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import NIOCore
@testable import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// Starting `tutti peer` as users do: as an ordinary user, on a control port that is taken, under a name
/// that is taken, with a state directory that cannot be written. Each refusal is one line on stderr and
/// exit status 1; a control channel that fails later stops the peer with an error.
final class PeerStartupCommandLineTests: XCTestCase {
    private var isRoot: Bool { getuid() == 0 }

    /// A directory of its own for each test, writable by `nobody` (the unprivileged peers run as it).
    private func scratchDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-startup-tests-\(UInt32.random(in: 0 ... .max))")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o777)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// A TCP port nothing listens on right now.
    private func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        return UInt16(bigEndian: address.sin_port)
    }

    /// How to run `tutti` as an ordinary user: as `nobody` when the tests run as root (through `setpriv`),
    /// else as the tests' own user. The binary is copied into `directory`, where `nobody` may run it (a
    /// checkout under /root is out of its reach).
    private func asOrdinaryUser(in directory: String) throws -> [String] {
        let copy = "\(directory)/tutti"
        try FileManager.default.copyItem(atPath: binary.path, toPath: copy)
        chmod(copy, 0o755)
        return (isRoot ? ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] : []) + [copy]
    }

    private func tutti(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await runChildProcess(binary.path, arguments, timeout: .seconds(20))
    }

    /// `tutti peer …` left running, logging to a file in `directory`.
    private func startPeer(_ arguments: [String], in directory: String) throws -> RunningChildProcess {
        let log = URL(fileURLWithPath: "\(directory)/peer-\(UInt32.random(in: 0 ... .max)).log")
        let peer = try RunningChildProcess(binary.path, ["peer"] + arguments, log: log)
        addTeardownBlock { await peer.stop() }
        return peer
    }

    /// `tutti ls --json` of the peer at `port` once it answers (within 10 s), else the last answer.
    private func answer(onPort port: UInt16) async throws -> (status: Int32, output: String, error: String) {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while true {
            let listed = try await tutti(["ls", "--json", "--no-discovery", "--peer", "127.0.0.1:\(port)"])
            if listed.status == 0 && listed.output.contains("\"name\"") || clock.now > deadline { return listed }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    // MARK: - An ordinary user's peer

    /// The peer as a musician runs it: as an ordinary user (`nobody` when the tests run as root), with the
    /// default state directory under its own HOME. It answers `ls`, from another user too.
    func testAPeerRunByAnOrdinaryUserAnswers() async throws {
        try requireBinary()
        let directory = try scratchDirectory()
        let port = try freePort()
        let home = "\(directory)/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        chmod(home, 0o777)
        var command = try asOrdinaryUser(in: directory)
        command.insert(contentsOf: ["/usr/bin/env", "-u", "XDG_STATE_HOME", "HOME=\(home)"], at: command.count - 1)
        let log = URL(fileURLWithPath: "\(directory)/unprivileged.log")
        let peer = try RunningChildProcess(
            command[0],
            Array(command.dropFirst()) + [
                "peer", "--name", "unprivileged", "--no-discovery", "--no-link", "--control-port", String(port), "--sender", "out=tone",
            ], log: log)
        addTeardownBlock { await peer.stop() }

        let listed = try await answer(onPort: port)
        XCTAssertEqual(listed.status, 0, "ls: \(listed.error)\npeer log:\n\(peer.output)")
        let described = try JSONDecoder().decode([PeerDescription].self, from: Data(listed.output.utf8))
        XCTAssertEqual(described.map(\.name), ["unprivileged"], "peer log:\n\(peer.output)")
        XCTAssertEqual(described.first?.ports.map(\.name), ["out"])
        // It really runs as that user, and kept its ID where that user's state lives.
        let status = try String(contentsOfFile: "/proc/\(peer.pid)/status", encoding: .utf8)
        let uid = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first
        XCTAssertEqual(uid.map(String.init), String(isRoot ? 65534 : getuid()))
        let stored = try String(contentsOfFile: "\(home)/.local/state/tutti/unprivileged.id", encoding: .utf8)
        XCTAssertEqual(stored.trimmingCharacters(in: .whitespacesAndNewlines), described.first?.id.rawValue)
        XCTAssertTrue(peer.process.isRunning, peer.output)
        let status0 = await peer.stop()
        XCTAssertEqual(status0, 0, peer.output)
        XCTAssertFalse(peer.output.contains(" error "), peer.output)
    }

    /// Requests and answers go out at once: every accepted control connection has TCP_NODELAY, set at the
    /// TCP level (at the socket level the same number is SO_DEBUG, which is what a root peer used to set).
    func testAcceptedControlConnectionsHaveTCPNoDelay() async throws {
        var lab = LoopbackPeers()
        // Open: the plain request below is answered and the connection stays up (a members-only peer would
        // refuse it and close the socket before the test can look at it).
        let peer = try await lab.start("nodelay", ports: [.toneSender(name: "out", sampleRates: [48_000])], access: .open)
        let client = connectedControlSocket(port: peer.controlPort)
        defer { close(client) }
        // An answered request means the connection is fully set up on the peer's side.
        let request = try ControlCodec.encodeRequest(ControlEnvelope(id: 1, message: .describe))
        XCTAssertEqual(request.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }, request.count)
        var reply = [UInt8](repeating: 0, count: 4)
        XCTAssertEqual(recv(client, &reply, 4, Int32(MSG_WAITALL)), 4)

        let accepted = try XCTUnwrap(acceptedSocket(serverPort: peer.controlPort, clientPort: localPort(of: client)))
        XCTAssertEqual(
            option(accepted, level: NIOBSDSocket.OptionLevel.tcp.rawValue, name: NIOBSDSocket.Option.tcp_nodelay.rawValue), 1, "TCP_NODELAY"
        )
        XCTAssertEqual(option(accepted, level: SOL_SOCKET, name: SO_DEBUG), 0, "SO_DEBUG")
        await lab.stopAll()
    }

    /// A client that keeps a control connection open and idle does not keep the peer from stopping.
    func testAPeerStopsWhileAClientHoldsAnIdleConnection() async throws {
        var lab = LoopbackPeers()
        let peer = try await lab.start("idle", ports: [.toneSender(name: "out", sampleRates: [48_000])])
        let client = connectedControlSocket(port: peer.controlPort)
        defer { close(client) }
        let stopped = await withTaskGroup(of: Bool.self) { group in
            group.addTask { [lab] in
                await lab.stopAll()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        XCTAssertTrue(stopped, "the peer's run() did not return within 5 s of stop()")
    }

    /// A control channel that can no longer set up connections fails loudly: `run` throws, so the peer
    /// stops with an error instead of listening and answering nothing.
    func testAControlChannelThatCannotSetUpConnectionsFails() async throws {
        // An option the kernel does not know, at the TCP level: setting it on an accepted socket fails.
        let server = try await ControlServer(port: 0, acceptedSocketOptions: [(.tcpOption(.init(rawValue: 0x7ffe)), 1)])
        let serving = Task { () -> PeerError? in
            do throws(PeerError) {
                try await server.run(logger: .init(label: "test")) { _, _ in .done }
                return nil
            } catch {
                return error
            }
        }
        let client = connectedControlSocket(port: server.port)
        defer { close(client) }
        let failure = await serving.value
        XCTAssertTrue(failure?.message.hasPrefix("the control channel failed: setsockopt(") ?? false, "\(String(describing: failure))")
        await server.close()
    }

    /// Clients that connect and reset at once (a port scan, a flood) are no failure of the channel: the
    /// peer keeps answering.
    func testConnectionsResetAtOnceDoNotStopTheControlChannel() async throws {
        var lab = LoopbackPeers()
        let peer = try await lab.start("resets", ports: [.toneSender(name: "out", sampleRates: [48_000])])
        for _ in 0..<200 {
            let client = connectedControlSocket(port: peer.controlPort)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)  // close sends a reset
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(client)
        }
        let response = try await TestControl.send(.describe, to: peer.endpoint)
        guard case .description(let description) = response else { return XCTFail("\(response)") }
        XCTAssertEqual(description.name, "resets")
        await lab.stopAll()
    }

    // MARK: - Start-up refusals, one line each

    func testAControlPortInUseNamesTheProgramHoldingIt() async throws {
        try requireBinary()
        let directory = try scratchDirectory()
        let port = try freePort()
        let first = try startPeer(
            [
                "--name", "first", "--no-discovery", "--no-link", "--state-dir", directory, "--control-port", String(port), "--sender",
                "out=tone",
            ],
            in: directory)
        let listed = try await answer(onPort: port)
        XCTAssertEqual(listed.status, 0, first.output)

        let second = try await tutti([
            "peer", "--name", "second", "--no-discovery", "--no-link", "--state-dir", directory, "--control-port", String(port), "--sender",
            "out=tone",
        ])
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(
            second.error,
            "tutti: control port \(port) is in use by another program (pid \(first.pid), tutti); choose another with --control-port or omit it\n"
        )
        XCTAssertEqual(second.output, "")
    }

    /// A peer's name is its own on its host (per state directory): a second peer of that name is refused,
    /// naming the process that has it; the name is free again once that process ends, however it ends. A
    /// peer of the same name with another state directory (another user) is a peer of its own: its own ID.
    func testASecondPeerOfTheSameNameIsRefusedUntilTheFirstEnds() async throws {
        try requireBinary()
        let directory = try scratchDirectory()
        let port = try freePort()
        let arguments = ["--name", "twin", "--no-discovery", "--no-link", "--state-dir", directory, "--sender", "out=tone"]
        let first = try startPeer(arguments + ["--control-port", String(port)], in: directory)
        let listed = try await answer(onPort: port)
        XCTAssertEqual(listed.status, 0, first.output)
        let firstID = try JSONDecoder().decode([PeerDescription].self, from: Data(listed.output.utf8)).first?.id

        let second = try await tutti(["peer"] + arguments)
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(
            second.error,
            "tutti: a peer named 'twin' is already running on this host (pid \(first.pid)); give this one another name with --name OTHER\n")

        // Another user's peer of the same name: its own state directory, so its own ID.
        let otherDirectory = "\(directory)/other-user"
        let otherPort = try freePort()
        let other = try startPeer(
            [
                "--name", "twin", "--no-discovery", "--no-link", "--state-dir", otherDirectory, "--sender", "out=tone", "--control-port",
                String(otherPort),
            ],
            in: directory)
        let otherListed = try await answer(onPort: otherPort)
        XCTAssertEqual(otherListed.status, 0, other.output)
        let otherID = try JSONDecoder().decode([PeerDescription].self, from: Data(otherListed.output.utf8)).first?.id
        XCTAssertNotNil(otherID)
        XCTAssertNotEqual(otherID, firstID)

        // A crash (SIGKILL) leaves no stale lock: the next peer of that name starts, with the same ID.
        kill(first.pid, SIGKILL)
        _ = await first.waitForExit(timeout: .seconds(5))
        let next = try startPeer(arguments + ["--control-port", String(port)], in: directory)
        let nextListed = try await answer(onPort: port)
        XCTAssertEqual(nextListed.status, 0, next.output)
        XCTAssertEqual(try JSONDecoder().decode([PeerDescription].self, from: Data(nextListed.output.utf8)).first?.id, firstID)
    }

    func testAStateDirectoryThatCannotBeCreatedIsOneLine() async throws {
        try requireBinary()
        let directory = try scratchDirectory()
        // A file where a directory should be: refused for root as for anyone.
        let file = "\(directory)/file"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data()))
        let refused = try await tutti([
            "peer", "--name", "x", "--no-discovery", "--no-link", "--state-dir", "\(file)/state", "--sender", "out=tone",
        ])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.error,
            "tutti: cannot create the state directory \(file)/state (Not a directory); choose a writable one with --state-dir DIR\n")
    }

    func testAPrivilegedControlPortIsOneLineForAnOrdinaryUser() async throws {
        try requireBinary()
        // Ports below this are root's (a container may lower it to 0; then there is nothing to refuse).
        let firstUnprivileged =
            Int(
                (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_unprivileged_port_start", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "1024") ?? 1024
        try XCTSkipUnless(firstUnprivileged > 80, "this host lets anyone listen on port 80")
        let directory = try scratchDirectory()
        let command =
            try asOrdinaryUser(in: directory) + [
                "peer", "--name", "x", "--no-discovery", "--no-link", "--state-dir", directory, "--control-port", "80", "--sender",
                "out=tone",
            ]
        let refused = try await runChildProcess(command[0], Array(command.dropFirst()), timeout: .seconds(20))
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.error,
            "tutti: control port 80 is reserved for root (ports below 1024); choose one from 1024 up with --control-port or omit it\n")
    }

    // MARK: - Sockets

    private func localPort(of descriptor: Int32) -> UInt16? { port(of: descriptor, getsockname) }

    private func port(of descriptor: Int32, _ get: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32)
        -> UInt16?
    {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { get(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        // sin_port and sin6_port both follow the 2-byte family.
        guard [AF_INET, AF_INET6].contains(Int32(storage.ss_family)) else { return nil }
        return withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }

    /// This process's end of the connection the control server accepted from `clientPort`.
    private func acceptedSocket(serverPort: UInt16, clientPort: UInt16?) -> Int32? {
        guard let clientPort else { return nil }
        for descriptor in Int32(0)..<4096 {
            if port(of: descriptor, getsockname) == serverPort, port(of: descriptor, getpeername) == clientPort { return descriptor }
        }
        return nil
    }

    private func option(_ descriptor: Int32, level: Int32, name: Int32) -> Int32? {
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, level, name, &value, &length) == 0 ? value : nil
    }

    func testAPeerNameThatCannotNameAFileIsRefusedInOneLine() async throws {
        try requireBinary()
        let result = try await runChildProcess(
            binary.path, ["peer", "--name", "a/b", "--sender", "out=tone", "--no-discovery", "--no-link"], timeout: .seconds(20))
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.error, "tutti: invalid peer name 'a/b': use 1–63 bytes, without '/' or control characters\n")
    }
}
