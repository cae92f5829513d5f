import TuttiIO

/// One port's work in each period of a paced engine clock: a C function and its context, the same
/// discipline as a JACK port group's handler, so the period loop calls no closure and no existential and
/// counts no references.
///
/// The port owns what `context` points to and frees it only after `EngineClock.detach` has returned.
/// Immutable; created and dropped on the control plane, called on the clock thread.
package final class PeriodNode: @unchecked Sendable {
    package let handler: PacedDeviceClock.Handler
    package let context: UnsafeMutableRawPointer

    package init(handler: PacedDeviceClock.Handler, context: UnsafeMutableRawPointer) {
        self.handler = handler
        self.context = context
    }
}
