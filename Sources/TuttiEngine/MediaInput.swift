import TuttiIO

/// One media socket through which receiving connections get their packets, told apart by SSRC
/// (`StreamDemux`), and the loop that serves it: an engine clock's own (read at the start of each period) or
/// the engine's network thread (for `jack` ports).
///
/// Made on the control plane when its clock (or the first `jack` connection) needs it, kept while the engine
/// lives; its port is the `mediaPort` a receiver answers with.
public final class MediaInput: @unchecked Sendable {
    package let socket: UDPSocket
    public let demux: StreamDemux
    package let loop: PacketReceiveLoop
    private let registration: PacketReceiveLoop.Registration

    /// The UDP port senders send this input's streams to.
    public var port: UInt16 { socket.localPort }

    /// Opens the socket and registers it on `loop`. Control plane.
    ///
    /// - Throws: `EngineError` when no UDP socket can be opened or the loop refuses it.
    package init(loop: PacketReceiveLoop, streamCapacity: Int) throws(EngineError) {
        do {
            socket = try UDPSocket()
        } catch {
            throw EngineError("cannot open a UDP socket: \(error)")
        }
        demux = StreamDemux(streamCapacity: streamCapacity)
        self.loop = loop
        do {
            registration = try loop.register(
                socket, handler: StreamDemux.datagramHandler, context: Unmanaged.passUnretained(demux).toOpaque())
        } catch {
            throw EngineError("cannot receive on UDP port \(socket.localPort): \(error)")
        }
    }

    deinit { loop.unregister(registration) }
}
