import TuttiIO

/// The packets of one period to every connection of one or more sender ports (an engine clock's, or a
/// `jack` port's), sent with one `sendmmsg` from one socket instead of one `sendto` per connection and packet.
///
/// Connections `add` their datagrams during the period (each is copied into a `UDPSendBatch` slot, with the
/// connection that owns it); `flush` sends them and credits each connection with what went out and what the
/// kernel refused. A batch that fills up mid-period is flushed at once, so a port with hundreds of
/// connections makes a few system calls per period, not hundreds.
///
/// Owned by an `EngineClock` (its paced sender ports share it) or a `JACKSenderProcessor`; device thread only.
/// Realtime-safe: yes (copies and system calls; the slots are allocated in `init`).
package struct SendFanOut: ~Copyable {
    /// Datagrams per `sendmmsg`.
    package static var batchCapacity: Int { 64 }
    private var batch = UDPSendBatch(capacity: SendFanOut.batchCapacity)
    /// The connection that added each slot's datagram (unretained: the connection table keeps it alive
    /// through the period).
    private let owners: UnsafeMutablePointer<Unmanaged<SendConnection>>
    private let socket: Unmanaged<UDPSocket>
    /// `sendmmsg` calls made so far (device thread; read by tests on a hand-driven clock).
    package private(set) var systemCalls = 0

    package init(socket: UDPSocket) {
        self.socket = Unmanaged.passUnretained(socket)
        owners = .allocate(capacity: Self.batchCapacity)
    }

    deinit { owners.deallocate() }

    /// Queues `datagram` for `destination` on behalf of `connection` (flushing first when the batch is full).
    /// A datagram larger than a slot is counted as a failed send of `connection`.
    @inline(__always)
    package mutating func add(_ datagram: UnsafeRawBufferPointer, to destination: UDPAddress, from connection: SendConnection) {
        if batch.count == batch.capacity { flush() }
        guard let slot = batch.append(datagram, to: destination) else {
            connection.countSend(succeeded: false)
            return
        }
        owners[slot] = Unmanaged.passUnretained(connection)
    }

    /// Sends what was queued and credits every datagram's connection. Call at the end of each period.
    @inline(__always)
    package mutating func flush() {
        guard batch.count > 0 else { return }
        let outcome = socket._withUnsafeGuaranteedRef { batch.send(from: $0) }
        systemCalls &+= outcome.systemCalls
        for slot in 0..<batch.count {
            let sent = batch.wasSent(at: slot)
            owners[slot]._withUnsafeGuaranteedRef { $0.countSend(succeeded: sent) }
        }
        batch.removeAll()
    }
}
