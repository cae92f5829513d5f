import CLilv
import Synchronization
import TuttiProcess

/// The LV2 plug-ins installed on this host (lilv's world: `LV2_PATH`, else the system's LV2 folders), loaded
/// once per process on first use, and what Tutti can host of them.
///
/// Control plane only (lilv is not thread-safe: every call into the world holds the catalog's lock).
public final class LV2Catalog: Sendable {
    /// The process's catalog.
    public static let shared = LV2Catalog()

    private let world: Mutex<World>

    /// lilv's world and the nodes Tutti asks about (never freed: the catalog lives as long as the process).
    struct World: @unchecked Sendable {
        let pointer: OpaquePointer
        let audioPort: OpaquePointer
        let controlPort: OpaquePointer
        let inputPort: OpaquePointer
        let outputPort: OpaquePointer
        let connectionOptional: OpaquePointer
        /// Port properties of controls that must not glide.
        let stepped: [OpaquePointer]
    }

    private init() {
        let world = lilv_world_new()!
        lilv_world_load_all(world)
        func uri(_ text: String) -> OpaquePointer { lilv_new_uri(world, text)! }
        let core = "http://lv2plug.in/ns/lv2core#"
        self.world = Mutex(
            World(
                pointer: world, audioPort: uri(core + "AudioPort"), controlPort: uri(core + "ControlPort"),
                inputPort: uri(core + "InputPort"), outputPort: uri(core + "OutputPort"),
                connectionOptional: uri(core + "connectionOptional"),
                stepped: [uri(core + "integer"), uri(core + "toggled"), uri(core + "enumeration")]))
    }

    /// The plug-in `uri` names, as Tutti hosts it: its audio ports, its control inputs as parameters, its latency
    /// port.
    ///
    /// - Throws: `ProcessorError` (one line): no such plug-in is installed; it needs host features Tutti does not
    ///   provide; it has ports Tutti cannot connect (atom, CV, …); it has no audio input or output.
    public func plugin(uri: String) throws(ProcessorError) -> LV2PluginDescription {
        try world.withLock { world throws(ProcessorError) in try Self.describe(uri, in: world) }
    }

    private static func describe(_ uri: String, in world: World) throws(ProcessorError) -> LV2PluginDescription {
        guard let node = lilv_new_uri(world.pointer, uri) else { throw ProcessorError("'\(uri)' is not a URI") }
        defer { lilv_node_free(node) }
        guard let plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world.pointer), node) else {
            throw ProcessorError("no LV2 plug-in \(uri) is installed on this host (see 'lv2ls'; LV2_PATH sets where to look)")
        }
        let name =
            lilv_plugin_get_name(plugin).map { text in
                defer { lilv_node_free(text) }
                return String(cString: lilv_node_as_string(text))
            } ?? uri
        if let required = lilv_plugin_get_required_features(plugin) {
            defer { lilv_nodes_free(required) }
            var features: [String] = []
            var iterator = lilv_nodes_begin(required)
            while !lilv_nodes_is_end(required, iterator) {
                if let feature = lilv_nodes_get(required, iterator) { features.append(String(cString: lilv_node_as_string(feature))) }
                iterator = lilv_nodes_next(required, iterator)
            }
            if !features.isEmpty {
                throw ProcessorError("LV2 plug-in \(name) needs host features Tutti does not provide: \(features.joined(separator: ", "))")
            }
        }
        let latencyPort = lilv_plugin_has_latency(plugin) ? lilv_plugin_get_latency_port_index(plugin) : nil
        var inputs: [UInt32] = []
        var outputs: [UInt32] = []
        var controls: [LV2PluginDescription.Control] = []
        var controlOutputs: [UInt32] = []
        for index in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
            let isInput = lilv_port_is_a(plugin, port, world.inputPort)
            if lilv_port_is_a(plugin, port, world.audioPort) {
                if isInput { inputs.append(index) } else { outputs.append(index) }
            } else if lilv_port_is_a(plugin, port, world.controlPort) {
                if !isInput {
                    controlOutputs.append(index)
                    continue
                }
                let symbol = String(cString: lilv_node_as_string(lilv_port_get_symbol(plugin, port)))
                var defaultNode: OpaquePointer?
                var minimumNode: OpaquePointer?
                var maximumNode: OpaquePointer?
                lilv_port_get_range(plugin, port, &defaultNode, &minimumNode, &maximumNode)
                func value(_ node: OpaquePointer?) -> Double? {
                    guard let node else { return nil }
                    defer { lilv_node_free(node) }
                    return lilv_node_is_float(node) || lilv_node_is_int(node) ? Double(lilv_node_as_float(node)) : nil
                }
                let minimum = value(minimumNode) ?? -1e6
                let maximum = value(maximumNode) ?? 1e6
                let fallback = value(defaultNode) ?? minimum
                let title =
                    lilv_port_get_name(plugin, port).map { text in
                        defer { lilv_node_free(text) }
                        return String(cString: lilv_node_as_string(text))
                    } ?? symbol
                controls.append(
                    LV2PluginDescription.Control(
                        index: index,
                        parameter: ProcessorParameter(
                            name: symbol, title: title, unit: "", range: min(minimum, maximum)...max(minimum, maximum),
                            defaultValue: Swift.min(Swift.max(fallback, min(minimum, maximum)), max(minimum, maximum))),
                        stepped: world.stepped.contains { lilv_port_has_property(plugin, port, $0) }))
            } else if !lilv_port_has_property(plugin, port, world.connectionOptional) {
                let symbol = String(cString: lilv_node_as_string(lilv_port_get_symbol(plugin, port)))
                throw ProcessorError("LV2 plug-in \(name) has a port Tutti cannot connect ('\(symbol)': neither audio nor control)")
            }
        }
        guard !inputs.isEmpty, !outputs.isEmpty else {
            throw ProcessorError("LV2 plug-in \(name) has \(inputs.count) audio inputs and \(outputs.count) outputs: a filter needs both")
        }
        return LV2PluginDescription(
            uri: uri, name: name, plugin: plugin, audioInputs: inputs, audioOutputs: outputs, controls: controls,
            controlOutputs: controlOutputs, latencyPort: latencyPort)
    }
}

extension LV2Catalog {
    /// `count` instances of `plugin` at `sampleRate`, with no host features (the catalog refuses plug-ins that
    /// require any). Control plane.
    ///
    /// - Throws: `ProcessorError` when the plug-in fails to instantiate (nothing stays allocated).
    func instantiate(_ plugin: LV2PluginDescription, sampleRate: Int, count: Int) throws(ProcessorError) -> [OpaquePointer] {
        try world.withLock { _ throws(ProcessorError) in
            var made: [OpaquePointer] = []
            for _ in 0..<count {
                guard let instance = lilv_plugin_instantiate(plugin.plugin, Double(sampleRate), nil) else {
                    for done in made { lilv_instance_free(UnsafeMutablePointer(done)) }
                    throw ProcessorError("LV2 plug-in \(plugin.name) failed to instantiate at \(sampleRate) Hz")
                }
                made.append(OpaquePointer(instance))
            }
            return made
        }
    }
}
