import Synchronization

/// Hands a stream's SRTP contexts between the control plane, which makes them (OpenSSL allocates) and frees
/// them, and the data thread, which uses them and must do neither: the control plane stages the context of
/// the stream's next key; the data thread takes it at a packet; a context the data thread is done with goes
/// back through one of two mailboxes, for the control plane to free. Lock-free; nothing is allocated or freed
/// on the data thread.
///
/// Thread rules: `stage` and `reclaim` on the control plane (one caller at a time); `hasStaged`, `take`,
/// `hasRoom` and `retire` on the data thread only.
final class SRTPContextHandoff: @unchecked Sendable {
    private let staged = Atomic<UnsafeMutableRawPointer?>(nil)
    private let firstMailbox = Atomic<UnsafeMutableRawPointer?>(nil)
    private let secondMailbox = Atomic<UnsafeMutableRawPointer?>(nil)

    init() {}

    deinit {
        Self.release(staged.exchange(nil, ordering: .acquiring))
        reclaim()
    }

    private static func release(_ pointer: UnsafeMutableRawPointer?) {
        if let pointer { Unmanaged<SRTPContext>.fromOpaque(pointer).release() }
    }

    /// Hands `context` to the data thread, after freeing what it gave back; a context staged before and not
    /// yet taken is freed (the newest key wins). Control plane.
    func stage(_ context: SRTPContext) {
        reclaim()
        Self.release(staged.exchange(Unmanaged.passRetained(context).toOpaque(), ordering: .acquiringAndReleasing))
    }

    /// Frees the contexts the data thread gave back. Control plane.
    func reclaim() {
        Self.release(firstMailbox.exchange(nil, ordering: .acquiring))
        Self.release(secondMailbox.exchange(nil, ordering: .acquiring))
    }

    /// Whether a context waits to be taken. Data thread; one relaxed load.
    @inline(__always)
    var hasStaged: Bool { staged.load(ordering: .relaxed) != nil }

    /// Whether a mailbox is free. Only the data thread fills them, so a `retire` after `true` succeeds. Data
    /// thread.
    @inline(__always)
    var hasRoom: Bool { firstMailbox.load(ordering: .relaxed) == nil || secondMailbox.load(ordering: .relaxed) == nil }

    /// The staged context, now the caller's (it owns the reference), or nil. Data thread.
    @inline(__always)
    func take() -> Unmanaged<SRTPContext>? {
        staged.exchange(nil, ordering: .acquiring).map { Unmanaged<SRTPContext>.fromOpaque($0) }
    }

    /// Gives `context` (a reference the caller owns) back for the control plane to free. False when both
    /// mailboxes are full: the caller keeps it and tries again later. Data thread.
    @inline(__always)
    func retire(_ context: Unmanaged<SRTPContext>) -> Bool {
        let pointer = context.toOpaque()
        if firstMailbox.compareExchange(expected: nil, desired: pointer, ordering: .releasing).exchanged { return true }
        return secondMailbox.compareExchange(expected: nil, desired: pointer, ordering: .releasing).exchanged
    }
}
