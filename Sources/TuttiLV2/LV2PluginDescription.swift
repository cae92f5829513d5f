import TuttiProcess

/// An installed LV2 plug-in as Tutti hosts it: its audio ports, its control inputs (the parameters `set`
/// changes), its control outputs (connected, read back) and its latency port. A value; thread-safe: yes; the
/// plug-in handle is only used under the catalog's lock.
public struct LV2PluginDescription: @unchecked Sendable {
    /// One control input.
    package struct Control: Sendable {
        package var index: UInt32
        package var parameter: ProcessorParameter
        /// An integer, toggle or enumeration: it jumps to a new value; every other control glides (no click).
        package var stepped = false
    }

    public let uri: String
    public let name: String
    /// lilv's plug-in (owned by the catalog's world, which lives as long as the process).
    let plugin: OpaquePointer
    package let audioInputs: [UInt32]
    package let audioOutputs: [UInt32]
    package let controls: [Control]
    package let controlOutputs: [UInt32]
    /// The control output that reports the plug-in's latency in frames, if it has one.
    package let latencyPort: UInt32?

    /// The specification of this plug-in with its defaults.
    public var specification: ProcessorSpecification {
        ProcessorSpecification(lv2: uri, parameters: controls.map(\.parameter))
    }

    /// How many instances a port of `channels` channels runs: one when the plug-in has that many audio inputs and
    /// outputs, one per channel when it is mono.
    ///
    /// - Throws: `ProcessorError` when neither fits.
    package func instances(forChannels channels: Int) throws(ProcessorError) -> Int {
        if audioInputs.count == channels, audioOutputs.count == channels { return 1 }
        if audioInputs.count == 1, audioOutputs.count == 1 { return channels }
        throw ProcessorError(
            "LV2 plug-in \(name) has \(audioInputs.count) audio inputs and \(audioOutputs.count) outputs; the port has \(channels) channel\(channels == 1 ? "" : "s")"
        )
    }
}
