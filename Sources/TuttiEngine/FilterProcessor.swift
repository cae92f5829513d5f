import TuttiLV2
import TuttiProcess

/// What a filter port runs: a built-in processor, a hosted LV2 plug-in or the application's own block (the
/// embedding API), called through a check of which one is there (no existential), each mutated where it is
/// stored (no copy on write, no reference counting).
///
/// Realtime-safe: `process`, `set` and `latencyFrames`. Thread-safe: no (the engine thread owns it); `make` is
/// control plane.
package struct FilterProcessor: Sendable {
    private var builtIn: BuiltInProcessor?
    private var lv2: LV2Processor?
    private var block: AudioBlock?

    /// The processor `specification` names, for `channels` channels at `sampleRate`, in periods of at most
    /// `maxFrames` (control plane: allocates; for LV2, loads and instantiates the plug-in).
    ///
    /// - Throws: `ProcessorError` (one line): the LV2 plug-in is not installed, does not fit the channels, or
    ///   fails to instantiate.
    package static func make(
        _ specification: ProcessorSpecification, sampleRate: Int, channels: Int, maxFrames: Int, block: AudioBlock? = nil
    ) throws(ProcessorError) -> FilterProcessor {
        if let block { return FilterProcessor(block: block) }
        guard let uri = specification.uri else {
            return FilterProcessor(builtIn: BuiltInProcessor.make(specification, sampleRate: sampleRate, channels: channels))
        }
        let plugin = try LV2Catalog.shared.plugin(uri: uri)
        return FilterProcessor(
            lv2: try LV2Processor(plugin, sampleRate: sampleRate, channels: channels, maxFrames: maxFrames, values: specification.values))
    }

    /// Frames by which the output lags the input (a plug-in's as it reports it now).
    package var latencyFrames: Int { builtIn?.latencyFrames ?? lv2?.latencyFrames ?? block?.latencyFrames ?? 0 }

    /// Sets parameter `index` to a value already checked against its range.
    package mutating func set(_ index: Int, to value: Double) {
        builtIn?.set(index, to: value)
        lv2?.set(index, to: value)
    }

    /// Processes `frames` interleaved frames of `channels` channels in place; `captureTime` (ns, on the peer's
    /// capture clock, `Int64.min` when unknown) is the first frame's, for an application block.
    package mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, captureTime: Int64) {
        builtIn?.process(samples, frames: frames, channels: channels)
        lv2?.process(samples, frames: frames, channels: channels)
        block?(samples, frames: frames, channels: channels, captureTime: captureTime)
    }
}
