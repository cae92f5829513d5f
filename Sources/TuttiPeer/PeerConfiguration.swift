import Logging
import TuttiCore
import TuttiEngine
import TuttiIO
import TuttiSession
import TuttiStream
import TuttiWire

/// Everything needed to run a peer. Built by the CLI from flags or a TOML file, or by an embedding app.
public struct PeerConfiguration: Sendable {
    /// Display name, also the DNS-SD instance name (Avahi may pick an alternative on a collision).
    public var name: String
    /// TCP port of the control channel; 0 picks a free one (it is published through DNS-SD).
    public var controlPort: UInt16 = 0
    /// The addresses the control channel listens on; empty: every interface. A peer on a venue network can
    /// keep its control channel on the band's own interface (or loopback) only.
    public var controlAddresses: [String] = []
    /// The addresses this peer may stream plain RTP to (`rtp://` destinations, for ffmpeg, GStreamer and other
    /// standard receivers); empty, the default: none. Anyone who can reach the control channel could otherwise
    /// make the peer send a stream to any address.
    public var rtpAllowed: [IPPrefix] = []
    /// How much of the control channel clients may take (connections, rate, time, size).
    public var controlLimits = ControlLimits()
    /// Who may join the session: anyone (`.open`, the library's default; the CLI asks for it explicitly) or the
    /// holders of its key (`.members`).
    public var access: PeerAccess = .open
    /// The file a members-only session's keys came from: the peer reads it again every 2 s, so a key change
    /// (`tutti key change`, `add`, `retire`) needs no restart. Nil: the keys stay as given.
    public var keyFile: String? = nil
    /// In a members-only session, answer `describe` and `stats` to anyone (a public status screen); the rest
    /// stays for members.
    public var publicReads = false
    /// Where the peer keeps its identity (`<name>.key`, its private key; `<name>.id`, the ID it proves).
    public var stateDirectory: String
    public var ports: [PortConfiguration]
    /// Peers to know without DNS-SD (for `describe`'s known peers and for networks without mDNS).
    public var explicitPeers: [ControlEndpoint] = []
    /// Publish and browse through Avahi.
    public var discovery = true
    /// Frames per device period for ports without a sound card.
    public var periodFrames = 64
    /// How receivers fill audio that did not arrive in time: repeat the last period of audio (default) or
    /// silence (for measurements that find gaps in the recording).
    public var concealment: Concealment = .repetition
    /// Receivers resample each stream slightly so that their buffers stay level while the sender's sample
    /// clock and theirs drift apart (sound cards differ by up to a few hundred ppm).
    public var driftCompensation = true
    /// `SCHED_FIFO` priority of the audio threads (device clocks, network receivers), as JACK runs its
    /// own; 0: normal scheduling. Without the right to it, the peer says so and runs them normally.
    public var realtimePriority: Int32 = PeerConfiguration.defaultRealtimePriority
    /// Time without media after which a receiving connection is reported lost.
    public var signalLossTimeout: Duration = .seconds(1)
    /// Join the shared beat clock (Ableton Link's protocol) on the network, and time media on it;
    /// nil: no beat clock, media timed on the wall clock.
    public var link: LinkConfiguration? = LinkConfiguration()
    /// How long each step of a connection's life may take (offer, start, probes of a live receiver).
    public var lifecycleTimeouts: LifecycleTimeouts = .peer

    public init(name: String, stateDirectory: String, ports: [PortConfiguration]) {
        self.name = name
        self.stateDirectory = stateDirectory
        self.ports = ports
    }
}

extension PeerConfiguration {
    /// The audio threads' default realtime priority: above JACK's default clients (10), below the kernel's
    /// own interrupt threads (50) would be too low for a busy machine, so 70, as PipeWire's data loop.
    public static let defaultRealtimePriority: Int32 = 70

    /// `$XDG_STATE_HOME/tutti`, else `~/.local/state/tutti`, else `/tmp/tutti-state`.
    public static var defaultStateDirectory: String { PeerIdentity.defaultDirectory }
}
