import TuttiCore

/// Field-by-field validation of decoded control messages: every text is bounded and free of control
/// characters, every number within `StreamLimits`, every list bounded. Control plane only.
public enum ControlValidation {
    public static func validate(_ request: ControlRequest) throws(ControlDecodingError) {
        switch request {
        case .describe, .statistics: return
        case .connect(let body):
            try check(body.source, "source")
            try check(body.destination, "destination")
            if let rtp = body.rtpDestination {
                try check(rtp)
                try require(body.destination == rtp.portReference, "destination must be \(rtp) for an RTP destination")
                try require(body.destinationEndpoints.isEmpty, "an RTP destination has no destinationEndpoints")
            } else {
                try checkList(body.destinationEndpoints, "destinationEndpoints", allowEmpty: false)
            }
            for endpoint in body.destinationEndpoints { try check(endpoint) }
            try check(body.options)
            if let key = body.rtpKey {
                try require(body.rtpDestination != nil, "rtpKey is for an RTP destination only")
                try require(key.suite == "AES_CM_128_HMAC_SHA1_80", "rtpKey.suite must be AES_CM_128_HMAC_SHA1_80")
                try require(key.keyBytes != nil, "rtpKey.key is not the suite's key and salt in hex")
            }
        case .offer(let body):
            try check(body.source, "source")
            try check(body.destination, "destination")
            try require(StreamLimits.channels.contains(body.channels), "channels \(body.channels) out of range")
            try require(!body.sampleRates.isEmpty && body.sampleRates.count <= 32, "sampleRates must list 1 to 32 rates")
            for rate in body.sampleRates {
                try require(StreamLimits.sampleRates.contains(rate), "sample rate \(rate) out of range")
            }
            try require(!body.sampleFormats.isEmpty && body.sampleFormats.count <= 8, "sampleFormats must list 1 to 8 formats")
            try check(body.options)
            if let upstream = body.upstream { try check(upstream, "upstream") }
            if let key = body.mediaKey {
                try require(
                    MediaKeying.suites[key.suite] != nil, "mediaKey.suite '\(key.suite.prefix(40))' is not an SRTP suite a peer takes")
                try require(key.keyBytes != nil, "mediaKey.key is not the \(key.suite)'s key and salt in hex")
            }
        case .disconnect(let body):
            try require(
                body.source != nil || body.destination != nil || body.connectionID != nil,
                "disconnect needs a source, a destination or a connection id")
            if let source = body.source { try check(source, "source") }
            if let destination = body.destination { try check(destination, "destination") }
        case .teardown(let body):
            try checkText(body.reason, "reason", allowEmpty: true)
        case .hello(let body), .bye(let body):
            try checkText(body.name, "name")
            try require(body.name.utf8.count <= 63, "name is longer than 63 bytes")
            try require(body.controlPort != 0, "controlPort must not be 0")
        case .upstream(let body):
            try check(body.upstream, "upstream")
        case .rekey(let body):
            try require(body.mediaKey.suite == "AEAD_AES_128_GCM", "a stream re-keys with AEAD_AES_128_GCM only")
            try require(body.mediaKey.keyBytes != nil, "mediaKey.key is not the suite's key and salt in hex")
            try require((body.senderIndex ?? 0) < 1 << 48, "senderIndex is beyond SRTP's 48-bit packet index")
        case .mute(let body):
            try require(PortDescriptor.isValidName(body.port), "port '\(body.port.prefix(40))' is not a port name")
            if let destination = body.destination { try check(destination, "destination") }
        case .setParameters(let body):
            try require(PortDescriptor.isValidName(body.port), "port '\(body.port.prefix(40))' is not a port name")
            try require((1...16).contains(body.settings.count), "settings must list 1 to 16 parameters")
            for setting in body.settings {
                try checkText(setting.name, "settings.name")
                try checkText(setting.value, "settings.value")
                try require(setting.name.utf8.count <= 32 && setting.value.utf8.count <= 32, "a setting is longer than 32 bytes")
            }
        }
    }

    /// Chains as offers and notices carry them: at most `Pipeline.maxCount`, each of 1 to `Pipeline.maxLength`
    /// valid port references, with a bounded origin host.
    static func check(_ pipelines: [Pipeline], _ field: String) throws(ControlDecodingError) {
        try require(pipelines.count <= Pipeline.maxCount, "\(field) lists more than \(Pipeline.maxCount) pipelines")
        for pipeline in pipelines {
            try require(
                (1...Pipeline.maxLength).contains(pipeline.ports.count), "\(field): a pipeline has 1 to \(Pipeline.maxLength) ports")
            for port in pipeline.ports { try check(port, field) }
            if let host = pipeline.originHost {
                try checkText(host, "\(field).originHost")
                try require(host.utf8.count <= 255, "\(field).originHost is longer than 255 bytes")
            }
        }
    }

    /// A filter's state: a port name, a bounded processor text, a latency and a rate in range.
    static func check(_ state: FilterState) throws(ControlDecodingError) {
        try require(PortDescriptor.isValidName(state.port), "filter port '\(state.port.prefix(40))' is not a port name")
        try checkText(state.processor, "filter.processor")
        try require(state.processor.utf8.count <= 512, "filter.processor is longer than 512 bytes")
        try require((0...StreamLimits.sampleRates.upperBound).contains(state.latencyFrames), "filter.latencyFrames out of range")
        try require(StreamLimits.sampleRates.contains(state.sampleRate), "filter.sampleRate out of range")
    }

    public static func validate(_ response: ControlResponse) throws(ControlDecodingError) {
        switch response {
        case .done: return
        case .description(let body):
            try checkText(body.name, "name")
            try checkText(body.host, "host")
            try checkList(body.ports, "ports")
            for port in body.ports { try check(port) }
            try checkList(body.connections, "connections")
            for connection in body.connections { try check(connection) }
            if let filters = body.filters {
                try checkList(filters, "filters")
                for filter in filters { try check(filter) }
            }
            if let routes = body.routes {
                try checkList(routes, "routes")
                for route in routes {
                    try require(PortDescriptor.isValidName(route.port), "routes names an invalid port")
                    try checkList(route.sources, "routes.sources")
                    for source in route.sources { try check(source, "routes.sources") }
                    try checkList(route.destinations, "routes.destinations")
                    for destination in route.destinations { try check(destination, "routes.destinations") }
                    try check(route.pipelines, "routes.pipelines")
                    for warning in route.warnings ?? [] {
                        try checkText(warning, "routes.warnings")
                        try require(warning.utf8.count <= 1024, "a warning is longer than 1024 bytes")
                    }
                }
            }
            if let fingerprint = body.access?.keyFingerprint {
                try require(SessionAccess.isValidFingerprint(fingerprint), "access.keyFingerprint is not 8 hex digits")
            }
            try checkList(body.knownPeers, "knownPeers")
            for peer in body.knownPeers {
                try checkText(peer.name, "knownPeers.name")
                try checkList(peer.endpoints, "knownPeers.endpoints")
                for endpoint in peer.endpoints { try check(endpoint) }
            }
            if let rates = body.runningSampleRates {
                try require(
                    rates.count <= ControlProtocol.maxListCount, "runningSampleRates has more than \(ControlProtocol.maxListCount) entries")
                for (port, rate) in rates {
                    try require(PortDescriptor.isValidName(port), "runningSampleRates names an invalid port")
                    try require(
                        StreamLimits.sampleRates.contains(rate), "running sample rate \(rate) out of range \(StreamLimits.sampleRates)")
                }
            }
        case .connected(let body), .alreadyConnected(let body): try check(body)
        case .answer(let body):
            try check(body.format)
            if let warning = body.warning {
                try checkText(warning, "warning")
                try require(warning.utf8.count <= 1024, "warning is longer than 1024 bytes")
            }
            try require(body.mediaPort != 0, "mediaPort must not be 0")
            try checkPayloadType(body.payloadType)
        case .disconnected(let count): try require(count >= 0, "negative count")
        case .statistics(let list):
            try checkList(list, "statistics")
            for entry in list {
                try check(entry.source, "source")
                try check(entry.destination, "destination")
                try check(entry.format)
            }
        case .filter(let state):
            try check(state)
        case .muted(let state):
            try check(state.port, "port")
            try checkList(state.connections, "connections")
        case .failure(let failure):
            // The CLI prints it: one line, no terminal escapes.
            try require(failure.message.utf8.count <= 1024, "error message too long")
            try require(
                !failure.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                "error message contains control characters")
        }
    }

    /// Checks a negotiated stream format against `StreamLimits`.
    public static func check(_ format: StreamFormat) throws(ControlDecodingError) {
        try require(StreamLimits.sampleRates.contains(format.sampleRate), "sample rate \(format.sampleRate) out of range")
        try require(StreamLimits.channels.contains(format.channels), "channels \(format.channels) out of range")
        try require(StreamLimits.packetFrames.contains(format.packetFrames), "packet of \(format.packetFrames) frames out of range")
        try require(format.payloadBytes <= StreamLimits.maxPayloadBytes, "payload of \(format.payloadBytes) bytes exceeds the MTU budget")
        let maxLatencyFrames = StreamLimits.maxTargetLatencyMilliseconds * format.sampleRate / 1000
        if format.sampleFormat == .opus {
            guard let opus = format.opus else { throw .invalidField("an OPUS stream needs its opus settings") }
            try check(opus)
            try require(format.sampleRate == OpusSettings.sampleRate, "an OPUS stream runs at 48000 Hz")
            try require(OpusSettings.supportedChannels.contains(format.channels), "an OPUS stream has 1 or 2 channels")
            try require(format.packetFrames == opus.frameDuration.framesPerChannel, "an OPUS packet is one Opus frame")
        } else {
            try require(format.opus == nil, "opus settings on a PCM stream")
        }
        if let range = format.adaptiveLatencyFrames {
            try require(
                range.lowerBound > 0 && range.upperBound <= maxLatencyFrames && range.contains(format.targetLatencyFrames),
                "adaptive latency range out of range")
        }
        if let synchronized = format.synchronizedLatencyNanoseconds {
            try require(
                synchronized > 0 && synchronized <= Int64(StreamLimits.maxTargetLatencyMilliseconds) * 1_000_000,
                "synchronized latency out of range")
        }
        try require(
            format.targetLatencyFrames > 0 && format.targetLatencyFrames <= maxLatencyFrames,
            "target latency of \(format.targetLatencyFrames) frames out of range")
    }

    static func check(_ opus: OpusSettings) throws(ControlDecodingError) {
        do throws(OpusSettingsError) { try opus.validate() } catch { throw .invalidField("opus: \(error)") }
    }

    static func check(_ connection: ConnectionSummary) throws(ControlDecodingError) {
        if let srtp = connection.srtp { try require(MediaKeying.suites[srtp] != nil, "srtp '\(srtp.prefix(40))' is not an SRTP suite") }
        try check(connection.source, "source")
        try check(connection.destination, "destination")
        try check(connection.format)
        try require(
            (connection.rtpDestination == nil) == (connection.payloadType == nil),
            "rtpDestination and payloadType go together")
        if let rtp = connection.rtpDestination { try check(rtp) }
        if let payloadType = connection.payloadType { try checkPayloadType(payloadType) }
        if let track = connection.track { try require(track >= 0 && track < PortDescriptor.trackCounts.upperBound, "track out of range") }
        if let warning = connection.warning {
            try checkText(warning, "warning")
            try require(warning.utf8.count <= 1024, "warning is longer than 1024 bytes")
        }
    }

    /// A unicast destination on a real port (the decoder already refused anything but a numeric address).
    static func check(_ destination: RTPDestination) throws(ControlDecodingError) {
        try require(destination.port != 0, "rtpDestination port must not be 0")
        if let problem = destination.unicastProblem { throw .invalidField("rtpDestination: \(problem)") }
    }

    static func checkPayloadType(_ payloadType: UInt8) throws(ControlDecodingError) {
        try require((96...127).contains(payloadType), "payloadType must be dynamic (96–127)")
    }

    static func check(_ port: PortDescriptor) throws(ControlDecodingError) {
        try require(PortDescriptor.isValidName(port.name), "invalid port name")
        try checkText(port.title, "title", allowEmpty: true)
        try require(StreamLimits.channels.contains(port.channels), "channels out of range")
        try require(port.sampleRates.count <= 32, "too many sample rates")
        for rate in port.sampleRates { try require(StreamLimits.sampleRates.contains(rate), "sample rate \(rate) out of range") }
        try require(port.sampleFormats.count <= 8, "too many sample formats")
        try require((port.tracks == nil) == (port.trackLatencyMilliseconds == nil), "tracks and trackLatencyMilliseconds go together")
        if let tracks = port.tracks { try require(PortDescriptor.trackCounts.contains(tracks), "tracks out of range") }
        if let latency = port.trackLatencyMilliseconds {
            try require(
                latency.isFinite && latency > 0 && latency <= Double(StreamLimits.maxTargetLatencyMilliseconds),
                "track latency out of range")
        }
    }

    static func check(_ reference: PortReference, _ field: String) throws(ControlDecodingError) {
        try checkText(reference.peer, "\(field).peer")
        try require(reference.peer.utf8.count <= 63, "\(field).peer is longer than 63 bytes")
        try require(PortDescriptor.isValidName(reference.port), "\(field).port '\(reference.port.prefix(40))' is not a valid port name")
    }

    static func check(_ endpoint: ControlEndpoint) throws(ControlDecodingError) {
        try checkText(endpoint.host, "endpoint host")
        try require(endpoint.port != 0, "endpoint port must not be 0")
    }

    static func check(_ options: ConnectOptions) throws(ControlDecodingError) {
        if let rate = options.sampleRate {
            try require(StreamLimits.sampleRates.contains(rate), "sample rate \(rate) out of range \(StreamLimits.sampleRates)")
        }
        if let channels = options.channels {
            try require(StreamLimits.channels.contains(channels), "channels \(channels) out of range \(StreamLimits.channels)")
        }
        if let frames = options.packetFrames {
            try require(StreamLimits.packetFrames.contains(frames), "packet of \(frames) frames out of range \(StreamLimits.packetFrames)")
        }
        if let latency = options.synchronizedLatencyMilliseconds {
            try require(
                latency.isFinite && latency > 0 && latency <= Double(StreamLimits.maxTargetLatencyMilliseconds),
                "synchronized latency \(latency) ms out of range (0, \(StreamLimits.maxTargetLatencyMilliseconds)]")
        }
        if let opus = options.opus { try check(opus) }
        try require(
            (options.latencyFloorMilliseconds == nil) == (options.latencyCeilingMilliseconds == nil),
            "adaptive latency needs both a floor and a ceiling")
        for (name, bound) in [("floor", options.latencyFloorMilliseconds), ("ceiling", options.latencyCeilingMilliseconds)] {
            guard let bound else { continue }
            try require(
                bound.isFinite && bound > 0 && bound <= Double(StreamLimits.maxTargetLatencyMilliseconds),
                "latency \(name) \(bound) ms out of range (0, \(StreamLimits.maxTargetLatencyMilliseconds)]")
        }
        if let floor = options.latencyFloorMilliseconds, let ceiling = options.latencyCeilingMilliseconds {
            try require(floor <= ceiling, "latency floor \(floor) ms is above the ceiling \(ceiling) ms")
        }
        if let latency = options.latencyMilliseconds {
            try require(
                latency.isFinite && latency > 0 && latency <= Double(StreamLimits.maxTargetLatencyMilliseconds),
                "latency \(latency) ms out of range (0, \(StreamLimits.maxTargetLatencyMilliseconds)]")
        }
    }

    static func checkText(_ text: String, _ field: String, allowEmpty: Bool = false) throws(ControlDecodingError) {
        try require(allowEmpty || !text.isEmpty, "\(field) is empty")
        try require(text.utf8.count <= ControlProtocol.maxTextBytes, "\(field) is longer than \(ControlProtocol.maxTextBytes) bytes")
        try require(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(field) contains control characters")
    }

    static func checkList<T>(_ list: [T], _ field: String, allowEmpty: Bool = true) throws(ControlDecodingError) {
        try require(allowEmpty || !list.isEmpty, "\(field) is empty")
        try require(list.count <= ControlProtocol.maxListCount, "\(field) has more than \(ControlProtocol.maxListCount) entries")
    }

    static func require(_ condition: Bool, _ detail: @autoclosure () -> String) throws(ControlDecodingError) {
        if !condition { throw .invalidField(detail()) }
    }
}
