import TuttiLV2
import TuttiProcess

/// What a filter port runs: a built-in processor or a hosted LV2 plug-in, called through a check of which one
/// is there (no existential), each mutated where it is stored (no copy on write, no reference counting).
///
/// Realtime-safe: `process`, `set` and `latencyFrames`. Thread-safe: no (the engine thread owns it); `make` is
/// control plane.
package struct FilterProcessor: Sendable {
    private var builtIn: BuiltInProcessor?
    private var lv2: LV2Processor?

    /// The processor `specification` names, for `channels` channels at `sampleRate`, in periods of at most
    /// `maxFrames` (control plane: allocates; for LV2, loads and instantiates the plug-in).
    ///
    /// - Throws: `ProcessorError` (one line): the LV2 plug-in is not installed, does not fit the channels, or
    ///   fails to instantiate.
    package static func make(
        _ specification: ProcessorSpecification, sampleRate: Int, channels: Int, maxFrames: Int
    ) throws(ProcessorError) -> FilterProcessor {
        guard let uri = specification.uri else {
            return FilterProcessor(builtIn: BuiltInProcessor.make(specification, sampleRate: sampleRate, channels: channels))
        }
        let plugin = try LV2Catalog.shared.plugin(uri: uri)
        return FilterProcessor(
            lv2: try LV2Processor(plugin, sampleRate: sampleRate, channels: channels, maxFrames: maxFrames, values: specification.values))
    }

    /// Frames by which the output lags the input (a plug-in's as it reports it now).
    package var latencyFrames: Int { builtIn?.latencyFrames ?? lv2?.latencyFrames ?? 0 }

    /// Sets parameter `index` to a value already checked against its range.
    package mutating func set(_ index: Int, to value: Double) {
        builtIn?.set(index, to: value)
        lv2?.set(index, to: value)
    }

    /// Processes `frames` interleaved frames of `channels` channels in place.
    package mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        builtIn?.process(samples, frames: frames, channels: channels)
        lv2?.process(samples, frames: frames, channels: channels)
    }
}
