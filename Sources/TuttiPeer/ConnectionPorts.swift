import TuttiEngine
import TuttiIO

/// The port a sending connection leaves from: a sender port, or a filter port's output. Control plane.
enum SendingPort: Sendable {
    case sender(SenderPort)
    case filter(FilterPort)

    var name: String {
        switch self {
        case .sender(let port): port.descriptor.name
        case .filter(let port): port.descriptor.name
        }
    }

    var isJACK: Bool { if case .sender(let port) = self { port.configuration.isJACK } else { false } }

    var deviceFigures: DeviceClockFigures {
        switch self {
        case .sender(let port): port.deviceFigures
        case .filter(let port): port.deviceFigures
        }
    }

    func sendingSocket() throws(EngineError) -> UDPSocket {
        switch self {
        case .sender(let port): try port.sendingSocket()
        case .filter(let port): try port.sendingSocket()
        }
    }

    func add(_ connection: SendConnection) async throws(EngineError) {
        switch self {
        case .sender(let port): try port.add(connection)
        case .filter(let port): try await port.add(connection)
        }
    }

    func remove(_ connection: SendConnection) async {
        switch self {
        case .sender(let port): await port.remove(connection)
        case .filter(let port): await port.remove(connection)
        }
    }
}

/// The port a receiving connection plays into: a receiver port, or a filter port's input. Control plane.
enum ReceivingPort: Sendable {
    case receiver(ReceiverPort)
    case filter(FilterPort)

    var name: String {
        switch self {
        case .receiver(let port): port.descriptor.name
        case .filter(let port): port.descriptor.name
        }
    }

    var isJACK: Bool { if case .receiver(let port) = self { port.configuration.isJACK } else { false } }

    var deviceFigures: DeviceClockFigures {
        switch self {
        case .receiver(let port): port.deviceFigures
        case .filter(let port): port.deviceFigures
        }
    }

    var strayDatagrams: UInt64? { if case .receiver(let port) = self { port.strayDatagrams } else { nil } }

    /// The file the port records now, for a `wav` receiver.
    var takePath: String? { if case .receiver(let port) = self { port.takePath } else { nil } }

    func add(_ connection: ReceiveConnection) async throws(EngineError) {
        switch self {
        case .receiver(let port): try await port.add(connection)
        case .filter(let port): try await port.add(connection)
        }
    }

    /// Stops playing `connection`; a receiver port that ended its take returns it.
    func remove(_ connection: ReceiveConnection) async -> ReceiverPort.FinishedTake? {
        switch self {
        case .receiver(let port): return await port.remove(connection)
        case .filter(let port):
            await port.remove(connection)
            return nil
        }
    }
}
