import TuttiEngine
import TuttiProcess
import TuttiWire

/// Filter ports' processors: their state for `describe`, and live parameter changes (`tutti set`). Control
/// plane (the actor).
extension Peer {
    /// Every filter port's processor now, by port name.
    var filterStates: [FilterState] {
        filterPorts.keys.sorted().compactMap { name in filterPorts[name].map(Self.state) }
    }

    static func state(of port: FilterPort) -> FilterState {
        let rate = port.activeSampleRate ?? port.descriptor.sampleRates.first ?? 48_000
        // While it runs, the latency the engine sees (an LV2 plug-in reports its own); idle, a built-in's.
        let latency = port.activeSampleRate == nil ? port.specification.latencyFrames(sampleRate: rate) : port.latencyFrames
        return FilterState(port: port.descriptor.name, processor: port.specification.description, latencyFrames: latency, sampleRate: rate)
    }

    /// Sets a filter port's parameters, all of them or none: every value is checked first (the first refused one
    /// is named, in one line, and nothing changes), then they are applied and take effect at the engine's next
    /// period.
    func setParameters(_ request: SetParametersRequest) -> ControlResponse {
        guard let port = filterPorts[request.port] else {
            let reason =
                configuration.ports.contains { $0.descriptor.name == request.port }
                ? "\(name):\(request.port) is not a filter port: only a filter's parameters can be set"
                : "peer \(name) has no filter port '\(request.port)' (filters: \(filterPorts.keys.sorted().joined(separator: ", ").nonEmpty ?? "none"))"
            return .failure(ControlFailure(.unknownPort, reason))
        }
        var checked = port.specification
        for setting in request.settings {
            do throws(ProcessorError) { try checked.set(setting.name, to: setting.value) } catch {
                logger.info("refused set \(name):\(request.port) \(setting.name)=\(setting.value): \(error.message)")
                return .failure(ControlFailure(.invalidOption, "\(name):\(request.port): \(error.message)"))
            }
        }
        for setting in request.settings {
            do throws(ProcessorError) { try port.set(setting.name, to: setting.value) } catch {
                return .failure(ControlFailure(.internalError, "\(name):\(request.port): \(error.message)"))
            }
        }
        logger.info("filter \(request.port): \(port.specification)")
        return .filter(Self.state(of: port))
    }
}

extension String {
    /// Nil when empty.
    var nonEmpty: String? { isEmpty ? nil : self }
}
