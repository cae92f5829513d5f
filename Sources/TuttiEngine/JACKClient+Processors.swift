import TuttiJACK

extension JACKClient {
    /// Moves `processor` (a port's noncopyable JACK state) behind a pointer and registers it, with
    /// `handler`, for ports `prefix_1 … prefix_channels`. Control plane, before the client activates.
    ///
    /// - Returns: the pointer the handler gets as its context; give it back to `releaseProcessor`.
    /// - Throws: the registration failure as a one-line `EngineError` (nothing stays allocated).
    package func registerProcessor<Processor: ~Copyable>(
        _ processor: consuming Processor, prefix: String, channels: Int, direction: JACKPortDirection, handler: JACKPeriodHandler
    ) throws(EngineError) -> UnsafeMutablePointer<Processor> {
        let pointer = UnsafeMutablePointer<Processor>.allocate(capacity: 1)
        pointer.initialize(to: processor)
        do {
            try registerPorts(
                prefix: prefix, channels: channels, direction: direction, handler: handler, context: UnsafeMutableRawPointer(pointer))
        } catch {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
            throw EngineError(error.message)
        }
        return pointer
    }

    /// Closes the client (so no callback runs any more), then frees a processor from `registerProcessor`.
    /// Control plane.
    package func releaseProcessor<Processor: ~Copyable>(_ pointer: UnsafeMutablePointer<Processor>) {
        close()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
