import TuttiIO

/// A port's period work while it runs on a paced engine clock: its noncopyable state behind a pointer, the
/// node that runs it, the clock, and the clock's overruns when it attached. Both sender and receiver ports
/// hold one while they stream; one place allocates, attaches, detaches and frees.
///
/// Control plane only (the port that owns it).
struct PacedAttachment<Processor: ~Copyable> {
    let clock: EngineClock
    let node: PeriodNode
    let processor: UnsafeMutablePointer<Processor>
    let overrunsAtStart: UInt64
    let lateWakesAtStart: UInt64

    /// Moves `processor` behind a pointer and attaches it, with `handler`, to `clock` from its next period.
    ///
    /// - Throws: `EngineError` when the clock runs as many ports as it can (nothing stays allocated).
    init(
        _ processor: consuming Processor, handler: PacedDeviceClock.Handler, on clock: EngineClock
    ) throws(EngineError) {
        let pointer = UnsafeMutablePointer<Processor>.allocate(capacity: 1)
        pointer.initialize(to: processor)
        let node = PeriodNode(handler: handler, context: UnsafeMutableRawPointer(pointer))
        do throws(EngineError) { try clock.attach(node) } catch {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
            throw error
        }
        self.clock = clock
        self.node = node
        self.processor = pointer
        overrunsAtStart = clock.overruns
        lateWakesAtStart = clock.lateWakes
    }

    /// Periods the clock skipped since the port attached (its thread stalled for more than 100 ms).
    var overruns: UInt64 { clock.overruns - overrunsAtStart }

    /// The clock's figures since the port attached (its latest wake-up: since the clock was made).
    var figures: DeviceClockFigures {
        var figures = DeviceClockFigures()
        figures.overruns = overruns
        figures.lateWakes = clock.lateWakes - lateWakesAtStart
        figures.worstWakeLatenessMilliseconds = clock.worstWakeLatenessMilliseconds
        return figures
    }

    /// Detaches from the clock (waiting until its thread lets go), then frees the processor.
    func detach() async {
        await clock.detach(node)
        free()
    }

    /// For a port going away without `detach` (its peer was not stopped): stops the clock's thread for good,
    /// then frees the processor.
    func tearDown() {
        clock.stopForTeardown()
        free()
    }

    private func free() {
        processor.deinitialize(count: 1)
        processor.deallocate()
    }
}
