import CLilv
import TuttiProcess

/// A hosted LV2 plug-in running as a filter port's processor: one instance for the port's channels, or one per
/// channel for a mono plug-in; the interleaved period is split into the plug-in's buffers, run, and joined
/// again. Everything is allocated at creation (buffers for `maxFrames`, control values); a period longer than
/// that runs in pieces. A changed control glides to its new value over 10 ms, the plug-in run one frame at a
/// time meanwhile, each with the next value (plug-ins apply a control at once, which clicks; stepping it every
/// few frames still shows); integer, toggle and enumeration controls jump.
///
/// Realtime-safe: `process` and `set` (no allocation, no lock; the plug-in's own `run` is realtime-safe when it
/// declares `lv2:hardRTCapable`). Thread-safe: no (the engine thread owns it; `Sendable` to be handed to it).
package struct LV2Processor: @unchecked Sendable {
    /// Owns the instances and buffers; the pointers below are the same memory, read without touching it.
    private let storage: Storage
    private let instances: UnsafeMutableBufferPointer<OpaquePointer>
    private let inputs: UnsafeMutableBufferPointer<Float>
    private let outputs: UnsafeMutableBufferPointer<Float>
    /// Control input values, `controlCount` per instance.
    private let controls: UnsafeMutableBufferPointer<Float>
    /// Control outputs (the latency port among them), one slot per port index per instance.
    private let controlOutputs: UnsafeMutableBufferPointer<Float>
    private let controlCount: Int
    private let maxFrames: Int
    private let channels: Int
    /// Audio channels each instance takes (the port's, or 1 for a mono plug-in run per channel).
    private let channelsPerInstance: Int
    /// Where the latency port's value is in `controlOutputs` (the first instance's), if the plug-in has one.
    private let latencySlot: Int?
    /// Per control: the value it glides to, the step per piece, the pieces left, and whether it jumps instead.
    private let targets: UnsafeMutableBufferPointer<Float>
    private let steps: UnsafeMutableBufferPointer<Float>
    private let piecesLeft: UnsafeMutableBufferPointer<Int32>
    private let stepped: UnsafeMutableBufferPointer<Bool>
    /// Pieces a glide takes (10 ms of one-frame pieces: a per-sample glide, as the built-in gain does).
    private let glidePieces: Int32
    private static let pieceFrames = 1

    final class Storage: @unchecked Sendable {
        let instances: UnsafeMutableBufferPointer<OpaquePointer>
        let buffers: [UnsafeMutableBufferPointer<Float>]
        /// Other allocations it frees (the glides' counters and flags).
        var others: [UnsafeMutableRawPointer] = []
        init(instances: UnsafeMutableBufferPointer<OpaquePointer>, buffers: [UnsafeMutableBufferPointer<Float>]) {
            self.instances = instances
            self.buffers = buffers
        }
        deinit {
            for instance in instances {
                lilv_instance_deactivate(UnsafeMutablePointer(instance))
                lilv_instance_free(UnsafeMutablePointer(instance))
            }
            instances.deallocate()
            for buffer in buffers { buffer.deallocate() }
            for pointer in others { pointer.deallocate() }
        }
    }

    /// Instantiates the plug-in for `channels` channels at `sampleRate` with `values` (in the order of its
    /// controls), connects every port and activates it. Control plane.
    ///
    /// - Throws: `ProcessorError` (one line): the channels do not fit, or the plug-in fails to instantiate.
    package init(
        _ plugin: LV2PluginDescription, sampleRate: Int, channels: Int, maxFrames: Int, values: [Double]
    ) throws(ProcessorError) {
        let count = try plugin.instances(forChannels: channels)
        channelsPerInstance = count == 1 ? channels : 1
        self.channels = channels
        self.maxFrames = maxFrames
        controlCount = plugin.controls.count
        let portCount =
            Int((plugin.audioInputs + plugin.audioOutputs + plugin.controlOutputs + plugin.controls.map(\.index)).max() ?? 0) + 1
        inputs = .allocate(capacity: channels * maxFrames)
        outputs = .allocate(capacity: channels * maxFrames)
        controls = .allocate(capacity: max(1, count * controlCount))
        controlOutputs = .allocate(capacity: count * portCount)
        inputs.initialize(repeating: 0)
        outputs.initialize(repeating: 0)
        controls.initialize(repeating: 0)
        controlOutputs.initialize(repeating: 0)
        let made = try LV2Catalog.shared.instantiate(plugin, sampleRate: sampleRate, count: count)
        instances = .allocate(capacity: count)
        _ = instances.initialize(from: made)
        targets = .allocate(capacity: max(1, controlCount))
        steps = .allocate(capacity: max(1, controlCount))
        piecesLeft = .allocate(capacity: max(1, controlCount))
        stepped = .allocate(capacity: max(1, controlCount))
        targets.initialize(repeating: 0)
        steps.initialize(repeating: 0)
        piecesLeft.initialize(repeating: 0)
        stepped.initialize(repeating: false)
        for (slot, control) in plugin.controls.enumerated() { stepped[slot] = control.stepped }
        glidePieces = Int32(max(1, sampleRate / 100 / Self.pieceFrames))
        storage = Storage(instances: instances, buffers: [inputs, outputs, controls, controlOutputs, targets, steps])
        storage.others = [UnsafeMutableRawPointer(piecesLeft.baseAddress!), UnsafeMutableRawPointer(stepped.baseAddress!)]
        latencySlot = plugin.latencyPort.map { Int($0) }
        for (number, instance) in instances.enumerated() {
            let handle = UnsafeMutablePointer<LilvInstance>(instance)
            for (channel, port) in plugin.audioInputs.enumerated() {
                lilv_instance_connect_port(handle, port, inputs.baseAddress! + (number * channelsPerInstance + channel) * maxFrames)
            }
            for (channel, port) in plugin.audioOutputs.enumerated() {
                lilv_instance_connect_port(handle, port, outputs.baseAddress! + (number * channelsPerInstance + channel) * maxFrames)
            }
            for (slot, control) in plugin.controls.enumerated() {
                controls[number * controlCount + slot] = Float(
                    values.indices.contains(slot) ? values[slot] : control.parameter.defaultValue)
                lilv_instance_connect_port(handle, control.index, controls.baseAddress! + number * controlCount + slot)
            }
            for port in plugin.controlOutputs {
                lilv_instance_connect_port(handle, port, controlOutputs.baseAddress! + number * portCount + Int(port))
            }
            lilv_instance_activate(handle)
        }
    }

    /// The latency the plug-in reports now, in frames (0 when it reports none).
    package var latencyFrames: Int { latencySlot.map { Int(controlOutputs[$0].rounded()) } ?? 0 }

    /// Sets control `index` (in the order of the plug-in's controls) on every instance: a glide from the next run
    /// on (a jump for a stepped control).
    package mutating func set(_ index: Int, to value: Double) {
        guard index < controlCount else { return }
        if stepped[index] {
            for instance in 0..<instances.count { controls[instance * controlCount + index] = Float(value) }
            piecesLeft[index] = 0
            return
        }
        targets[index] = Float(value)
        steps[index] = (Float(value) - controls[index]) / Float(glidePieces)
        piecesLeft[index] = glidePieces
    }

    /// Whether a control is gliding.
    private var gliding: Bool {
        for index in 0..<controlCount where piecesLeft[index] > 0 { return true }
        return false
    }

    /// Moves every gliding control one piece toward its target, on every instance.
    private func glideOnePiece() {
        for index in 0..<controlCount where piecesLeft[index] > 0 {
            piecesLeft[index] -= 1
            let value = piecesLeft[index] == 0 ? targets[index] : controls[index] + steps[index]
            for instance in 0..<instances.count { controls[instance * controlCount + index] = value }
        }
    }

    /// Runs the plug-in over `frames` interleaved frames of `channels` channels, in place.
    package mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard channels == self.channels else { return }
        var start = 0
        while start < frames {
            // While a control glides, the plug-in runs in pieces, each with the control's next value.
            var count = min(maxFrames, frames - start)
            if gliding {
                glideOnePiece()
                count = min(count, Self.pieceFrames)
            }
            for frame in 0..<count {
                for channel in 0..<channels { inputs[channel * maxFrames + frame] = samples[(start + frame) * channels + channel] }
            }
            for instance in instances { lilv_instance_run(UnsafeMutablePointer(instance), UInt32(count)) }
            for frame in 0..<count {
                for channel in 0..<channels { samples[(start + frame) * channels + channel] = outputs[channel * maxFrames + frame] }
            }
            start += count
        }
    }
}
