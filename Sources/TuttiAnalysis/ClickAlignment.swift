/// Where the clicks of several channels fall relative to one another: a recording of click tracks (the `click`
/// source, one click per instant of the shared clock on every sender) whose tracks line up shows every
/// channel's clicks on the same frames as the reference channel's.
///
/// A click is found at the first frame whose |sample| exceeds `threshold` after at least `minimumGapFrames`
/// below it, moved to the largest |sample| of the next 16 frames (a resampler spreads an impulse). Each click of
/// a channel is matched to the nearest click of the reference channel; its offset is the difference in frames
/// (positive: later than the reference's). Clicks with no reference click within `minimumGapFrames / 2` are
/// counted unmatched.
///
/// Thread-safe: a value; `init` is a pure function any thread may call.
public struct ClickAlignment: Hashable, Sendable, Codable {
    /// One channel's clicks and their offsets to the reference channel's.
    public struct Channel: Hashable, Sendable, Codable {
        public var channel: Int
        /// Every click found, by frame.
        public var clickFrames: [Int]
        /// Smallest and largest offset of a matched click to the reference channel's, in frames (nil: none matched).
        public var minimumOffset: Int?
        public var maximumOffset: Int?
        /// Clicks with no reference click near them.
        public var unmatched: Int
    }

    public var referenceChannel: Int
    public var channels: [Channel]

    /// Finds the clicks of every channel in `channels` (one array of samples each) and their offsets to
    /// `referenceChannel`'s.
    public init(channels samples: [[Float]], referenceChannel: Int = 0, threshold: Float = 0.25, minimumGapFrames: Int = 2_400) {
        precondition(samples.indices.contains(referenceChannel) && minimumGapFrames > 1)
        self.referenceChannel = referenceChannel
        let found = samples.map { Self.clicks(in: $0, threshold: threshold, minimumGapFrames: minimumGapFrames) }
        let reference = found[referenceChannel]
        channels = found.enumerated().map { index, clicks in
            var channel = Channel(channel: index, clickFrames: clicks, minimumOffset: nil, maximumOffset: nil, unmatched: 0)
            for frame in clicks {
                guard let nearest = Self.nearest(to: frame, in: reference), abs(nearest - frame) <= minimumGapFrames / 2 else {
                    channel.unmatched += 1
                    continue
                }
                let offset = frame - nearest
                channel.minimumOffset = min(channel.minimumOffset ?? offset, offset)
                channel.maximumOffset = max(channel.maximumOffset ?? offset, offset)
            }
            return channel
        }
    }

    /// The frames of the clicks in one channel.
    static func clicks(in samples: [Float], threshold: Float, minimumGapFrames: Int) -> [Int] {
        var clicks: [Int] = []
        var quietSince = -minimumGapFrames
        var frame = 0
        while frame < samples.count {
            guard abs(samples[frame]) > threshold else {
                frame += 1
                continue
            }
            let window = frame..<min(samples.count, frame + 16)
            let peak = window.max { abs(samples[$0]) < abs(samples[$1]) } ?? frame
            if frame - quietSince >= minimumGapFrames { clicks.append(peak) }
            quietSince = window.upperBound
            frame = window.upperBound
        }
        return clicks
    }

    /// The element of the sorted `frames` nearest to `frame`.
    static func nearest(to frame: Int, in frames: [Int]) -> Int? {
        var low = 0
        var high = frames.count
        while low < high {
            let middle = (low + high) / 2
            if frames[middle] < frame { low = middle + 1 } else { high = middle }
        }
        let candidates = [low - 1, low].filter { frames.indices.contains($0) }.map { frames[$0] }
        return candidates.min { abs($0 - frame) < abs($1 - frame) }
    }
}
