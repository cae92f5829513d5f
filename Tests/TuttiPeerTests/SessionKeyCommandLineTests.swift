import Foundation
import TuttiCore
import TuttiPeer
import TuttiSecurity
import TuttiTesting
import TuttiWire
import XCTest

/// `tutti key` and what a host without the key is told, through the built binary: exact lines, exit statuses
/// and the key file's mode.
final class SessionKeyCommandLineTests: XCTestCase {
    private var directory = ""
    /// A host with no key anywhere: no `$TUTTI_KEY`, a config directory of its own.
    private var keyless: [String: String] { ["TUTTI_KEY": "", "TUTTI_KEY_FILE": "", "XDG_CONFIG_HOME": directory + "/config"] }

    override func setUp() async throws {
        try TuttiBinary.require()
        directory = NSTemporaryDirectory() + "tutti-key-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func testKeyNewShowChangeAddRetire() async throws {
        let path = directory + "/config/tutti/session.key"
        let made = try await TuttiBinary.run(["key", "new"], environment: keyless)
        XCTAssertEqual(made.status, 0, made.error)
        let lines = made.output.split(separator: "\n").map(String.init)
        let key = try SessionKey(text: try XCTUnwrap(lines.first))
        XCTAssertEqual(lines.count, 3, made.output)
        XCTAssertEqual(lines[1], "session key \(key.fingerprint) stored in \(path) (mode 0600); it is printed only this once.")
        XCTAssertEqual(try mode(path), 0o600)
        XCTAssertEqual(try mode(directory + "/config/tutti"), 0o700)

        let shown = try await TuttiBinary.run(["key", "show"], environment: keyless)
        XCTAssertEqual(shown.output, "\(path): session key \(key.fingerprint)\n")
        XCTAssertFalse(shown.output.contains(key.text), "show never prints the key")

        let again = try await TuttiBinary.run(["key", "new"], environment: keyless)
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(
            again.error,
            "tutti: \(path) already holds a session key (key \(key.fingerprint)); 'tutti key change' changes it while the session plays, --force replaces it\n"
        )

        let changed = try await TuttiBinary.run(["key", "change"], environment: keyless)
        XCTAssertEqual(changed.status, 0, changed.error)
        let new = try SessionKey(text: String(try XCTUnwrap(changed.output.split(separator: "\n").first)))
        XCTAssertEqual(try SessionKeyFile.load(path).keys, [new, key])

        // Another host takes the new key over its old one, then both retire the old.
        let other = directory + "/other.key"
        _ = try await TuttiBinary.run(["key", "add", key.text, "--file", other], environment: keyless)
        let added = try await TuttiBinary.run(["key", "add", new.text, "--file", other], environment: keyless)
        XCTAssertEqual(added.output, "session key \(new.fingerprint) is current in \(other); still accepted: \(key.fingerprint)\n")
        let retired = try await TuttiBinary.run(["key", "retire", "--file", other], environment: keyless)
        XCTAssertEqual(retired.output, "retired \(key.fingerprint); \(other) holds only \(new.fingerprint)\n")
        XCTAssertEqual(try SessionKeyFile.load(other).keys, [new])
        XCTAssertEqual(try mode(other), 0o600)

        // A different last letter: "a" alone would be no typo for the one key in 32 that ends in "a".
        let mistyped = String(new.text.dropLast()) + (new.text.hasSuffix("a") ? "b" : "a")
        let typo = try await TuttiBinary.run(["key", "add", mistyped, "--file", other], environment: keyless)
        XCTAssertEqual(typo.status, 1)
        XCTAssertEqual(typo.error, "tutti: the session key has a typo: its checksum does not match (copy it again)\n")
    }

    func testAPeerMustBeGivenAKeyOrBeOpenAndAKeyFileOthersMayReadIsRefused() async throws {
        let peer = ["peer", "--name", "x", "--no-discovery", "--no-link", "--sender", "out=tone", "--dry-run"]
        let none = try await TuttiBinary.run(peer, environment: keyless)
        XCTAssertEqual(none.status, 1)
        XCTAssertEqual(
            none.error,
            "tutti: choose who may join this peer's session: make a session key with 'tutti key new' and copy its file to the other hosts (members only), or run an open session that anyone on the network can join with --open\n"
        )
        let open = try await TuttiBinary.run(peer + ["--open"], environment: keyless)
        XCTAssertEqual(open.status, 0, open.error)
        XCTAssertTrue(open.output.hasPrefix("peer x: ") && open.output.contains(", open session\n"), open.output)

        let path = directory + "/shared.key"
        _ = try await TuttiBinary.run(["key", "new", "--file", path], environment: keyless)
        XCTAssertEqual(chmod(path, 0o644), 0)
        let exposed = try await TuttiBinary.run(peer + ["--key-file", path], environment: keyless)
        XCTAssertEqual(exposed.status, 1)
        XCTAssertEqual(
            exposed.error,
            "tutti: cannot use the session key file: \(path) may be read by other users (mode 644); make it yours alone with: chmod 600 \(path)\n"
        )
        let both = try await TuttiBinary.run(peer + ["--open", "--key-file", path], environment: keyless)
        XCTAssertEqual(both.error, "tutti: --open and --key-file exclude each other: an open session has no key\n")
    }

    func testAHostWithoutTheKeyIsToldInOneLineAndAnOpenPeerIsShownAsOpen() async throws {
        var lab = LoopbackPeers()
        let stage = try await lab.start("stage", ports: [.toneSender(name: "out")])
        let foh = try await lab.start("foh", ports: [.receiver(name: "in", sink: .null)])
        let jam = try await lab.start("jam", ports: [.receiver(name: "in", sink: .null)], access: .open)
        let peers = ["--no-discovery", "--peer", "\(stage.endpoint)", "--peer", "\(foh.endpoint)"]
        let refusal =
            "peer stage is in a members-only session and this host has no session key: copy the session's key file to this host (tutti key show prints where it goes) or pass --key-file FILE"

        let listed = try await TuttiBinary.run(["ls", "--no-discovery", "--peer", "\(stage.endpoint)"], environment: keyless)
        XCTAssertEqual(listed.output, "\(stage.endpoint)  (not answering: \(refusal))\n")
        let connect = try await TuttiBinary.run(["connect", "stage:out", "foh:in"] + peers, environment: keyless)
        XCTAssertEqual(connect.status, 1)
        XCTAssertTrue(connect.error.hasPrefix("tutti: no peer named 'stage' answered; "), connect.error)
        XCTAssertTrue(connect.error.contains(refusal), connect.error)
        XCTAssertEqual(connect.error.split(separator: "\n").count, 1, connect.error)
        let disconnect = try await TuttiBinary.run(["disconnect", "stage:out"] + peers, environment: keyless)
        XCTAssertEqual(disconnect.status, 1)
        XCTAssertEqual(disconnect.error.split(separator: "\n").count, 1, disconnect.error)

        // Members see who may join each peer; a member's own commands still talk to the open peer with --open.
        let member = try await TuttiBinary.run(["ls", "--no-discovery", "--peer", "\(stage.endpoint)"])
        XCTAssertTrue(
            member.output.hasPrefix("stage  id \(stage.id.short)  host ")
                && member.output.contains("members only (key \(TestSession.keys.current.fingerprint))\n"), member.output)
        let open = try await TuttiBinary.run(["ls", "--open", "--no-discovery", "--peer", "\(jam.endpoint)"])
        XCTAssertTrue(open.output.contains("  OPEN session: anyone on the network may join\n"), open.output)
        let refused = try await TuttiBinary.run(["ls", "--no-discovery", "--peer", "\(jam.endpoint)"])
        XCTAssertTrue(refused.output.contains("runs an open session without a session key"), refused.output)
        await lab.stopAll()
    }
}
