/// The role of a port, after the Audiobus SDK's port model.
public enum PortKind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Produces audio (a source): tone, WAV file, stdin; later a sound card input.
    case sender
    /// Consumes audio (a sink): WAV file, stdout, null; later a sound card output.
    case receiver
    /// Sits in the middle of a pipeline (receives, processes, sends). Negotiated like both; added by a later issue.
    case filter

    public var description: String { rawValue }
}

/// What a peer advertises about one of its ports.
public struct PortDescriptor: Hashable, Sendable, Codable {
    /// Identifier, unique within the peer: `[A-Za-z0-9_.-]{1,32}`.
    public var name: String
    /// Human-readable title.
    public var title: String
    public var kind: PortKind
    /// Channels the port produces or consumes.
    public var channels: Int
    /// Sample rates the port supports, in order of preference.
    public var sampleRates: [Int]
    /// Wire formats the port accepts, in order of preference.
    public var sampleFormats: [SampleFormat]
    /// Receiver or filter: whether it takes connections from its own peer (`allows-self`); nil or false: a
    /// connection from a port of the same peer is refused.
    public var allowsSelf: Bool?
    /// Sender: whether its audio comes from a live input (`live`: a microphone, an instrument), so that a
    /// pipeline leading it back to a receiver on its own host that plays out gets a feedback warning.
    public var live: Bool?
    /// Receiver: takes its sources as separate tracks (`mode=separate,tracks=N`), one per pipeline, each
    /// `channels` wide, instead of mixing them; nil: mixed.
    public var tracks: Int?
    /// Receiver in separate mode: every track plays what was captured this long ago on the shared clock
    /// (synchronized playout), so tracks from different hosts line up to the sample; nil when mixed.
    public var trackLatencyMilliseconds: Double?

    /// Tracks a separate-mode receiver may have, and its default latency (ms).
    public static let trackCounts: ClosedRange<Int> = 1...16
    public static let defaultTrackLatencyMilliseconds = 10.0
    /// The most channels a separate-mode port's tracks have together.
    public static let maxOutputChannels = 64

    public init(
        name: String, title: String, kind: PortKind, channels: Int, sampleRates: [Int],
        sampleFormats: [SampleFormat] = [.l24, .l16, .opus], allowsSelf: Bool = false, live: Bool = false
    ) {
        self.allowsSelf = allowsSelf ? true : nil
        self.live = live ? true : nil
        self.name = name
        self.title = title
        self.kind = kind
        self.channels = channels
        self.sampleRates = sampleRates
        self.sampleFormats = sampleFormats
    }

    /// Whether a connection from a port of the same peer may end here.
    public var takesSelfConnections: Bool { allowsSelf == true }
    /// Whether its audio comes from a live input.
    public var isLive: Bool { live == true }

    /// Whether the port is a receiver that takes its sources as separate tracks.
    public var isSeparate: Bool { tracks != nil }

    /// The channels of what the port plays or records: `channels` per track (one track when mixed).
    public var outputChannels: Int { channels * (tracks ?? 1) }

    /// The same port taking its sources as `tracks` separate tracks played `latency` ms after capture.
    public func separate(tracks: Int, latencyMilliseconds: Double) -> PortDescriptor {
        var port = self
        port.tracks = tracks
        port.trackLatencyMilliseconds = latencyMilliseconds
        return port
    }

    /// Whether `name` is a valid port or peer identifier: 1–32 of `A–Z a–z 0–9 _ . -`.
    public static func isValidName(_ name: String) -> Bool {
        guard (1...32).contains(name.utf8.count) else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
    }

    /// One-token summary for DNS-SD TXT records: `name:kind:channels:rate/rate`, e.g. `out:s:2:48000/44100`.
    public var summary: String {
        let kindLetter = kind == .sender ? "s" : kind == .receiver ? "r" : "f"
        return "\(name):\(kindLetter):\(channels):\(sampleRates.map(String.init).joined(separator: "/"))"
    }
}
