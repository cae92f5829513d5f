import TuttiSecurity

/// A key change without a restart: the peer reads its key file again every 2 s and, when the keys changed,
/// admits and connects with the new ones from then on, and gives every live stream it sends a new SRTP key.
extension Peer {
    /// Every 2 s while the peer runs: applies the key file's keys when they changed. A file that became
    /// unreadable or invalid keeps the keys in use, with one warning until it is readable again. Control plane.
    func watchKeyFile() async {
        guard let path = configuration.keyFile, sessionKeys != nil else { return }
        var complained = false
        var ticks = 0
        while !stopped {
            try? await Task.sleep(for: .milliseconds(250))
            ticks += 1
            guard ticks % 8 == 0, !stopped else { continue }
            do throws(PeerError) {
                let keys = try SessionKeyFile.load(path)
                complained = false
                guard keys != sessionKeys else { continue }
                apply(keys)
            } catch {
                if !complained {
                    logger.warning("\(error.message); the session keys in use stay")
                    complained = true
                }
            }
        }
    }

    /// Admits and connects with `keys` from now on. Control plane.
    func apply(_ keys: SessionKeyRing) {
        let changed = keys.current != sessionKeys?.current
        sessionKeys = keys
        server.updateKeys(keys)
        tcpTransport?.updateKeys(keys)
        let older = keys.keys.dropFirst().map(\.fingerprint)
        logger.notice(
            "session key changed: now \(keys.current.fingerprint)\(older.isEmpty ? "" : ", still accepting \(older.joined(separator: ", "))")"
        )
        // Every live stream this peer sends gets a new SRTP key, given over the new key's control channel.
        if changed { step(.sessionKeyChanged) }
    }
}
