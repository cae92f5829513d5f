import Foundation

/// The session every `tutti` the tests start belongs to: a members-only session with a fixed test key
/// (`TUTTI_KEY`), so peers and commands speak the members' handshake and encrypted control in every
/// command-line test, as users' sessions do. Tests of an open session, or of a host without the key, pass
/// their own environment over it (`--open`, or `TUTTI_KEY` set to another key or empty).
public enum TestSession {
    /// The tests' session key (made with `tutti key new`; it protects nothing).
    public static let key = "tk-6n4z-nexx-gx7h-knfg-cj43-mh6a-tvc2-og3u-zcvc-4ov2-3ww2-frsr-vlpz-pc35"

    /// What a child `tutti` gets on top of the test process's environment: the key, and a key directory of its
    /// own so a user's `~/.config/tutti/session.key` never leaks in.
    public static var environment: [String: String] {
        ["TUTTI_KEY": key, "XDG_CONFIG_HOME": NSTemporaryDirectory() + "tutti-tests-config"]
    }

    /// This process's environment with the test session's and then `extra` on top.
    public static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(environment) { _, session in session }.merging(extra) { _, given in given }
    }
}
