import TuttiCore
import TuttiWire

@testable import TuttiSession

/// Every named state of one connection, reached through public inputs, and one sample of every input.
enum LifecycleStates {
    typealias D = LifecycleDriver

    /// A state: how to reach it, the connection it concerns, and the outcome inputs (by label) that fit it.
    struct State {
        var name: String
        var id: ConnectionID
        var fits: Set<String>
        var setUp: (inout D) -> Void
    }

    static let first = D.id(1)
    static let second = D.id(2)
    static let unknown = D.id(0xdead)
    private static let offerOutcomes: Set<String> = ["answered", "refused", "refusedUnusable", "unreachable"]
    private static let probeOutcomes: Set<String> = ["probedListed", "probedAbsent", "probedRefused", "probedUnanswered"]

    static var all: [State] {
        [
            State(name: "absent", id: first, fits: [], setUp: { _ in }),
            State(name: "sender verifying", id: second, fits: probeOutcomes) {
                $0.liveSender(first)
                $0.feed($0.connect(second))
            },
            State(name: "sender offering", id: first, fits: offerOutcomes) { $0.offering(first) },
            State(name: "sender offering(cancel)", id: first, fits: offerOutcomes) {
                $0.offering(first)
                $0.feed(.disconnect(DisconnectRequest(connectionID: first), request: $0.request()))
            },
            State(name: "sender starting", id: first, fits: ["startedSending", "startFailedSending"]) { $0.startingSender(first) },
            State(name: "sender starting(cancel)", id: first, fits: ["startedSending", "startFailedSending"]) {
                $0.startingSender(first)
                $0.feed(.teardown(TeardownNotice(connectionID: first, reason: "x"), request: $0.request()))
            },
            State(name: "sender live", id: first, fits: []) { $0.liveSender(first) },
            State(name: "sender live(probing)", id: first, fits: probeOutcomes) {
                $0.liveSender(first)
                $0.advance(.seconds(1))
            },
            State(name: "sender live(unanswered)", id: first, fits: probeOutcomes) {
                $0.liveSender(first)
                $0.advance(.seconds(1))
                $0.feed(.probed(to: [D.endpointB], .unanswered))
                $0.advance(.seconds(1))
            },
            State(name: "sender live(rtp)", id: first, fits: []) {
                $0.feed($0.connectRTP(first))
                $0.feed(.started(first, .sending, mediaPort: nil))
            },
            State(name: "sender closing{stop}", id: first, fits: ["stoppedSending"]) {
                $0.liveSender(first)
                $0.feed(.teardown(TeardownNotice(connectionID: first, reason: "x"), request: $0.request()))
            },
            State(name: "sender closing{notify}", id: first, fits: ["notifiedSending"]) {
                $0.offering(first)
                $0.feed(.unreachable(first, ControlFailure(.unreachable, "x")))
            },
            State(name: "sender closing{stop,notify}", id: first, fits: ["stoppedSending", "notifiedSending"]) {
                $0.liveSender(first)
                $0.feed(.disconnect(DisconnectRequest(connectionID: first), request: $0.request()))
            },
            State(name: "receiver starting", id: first, fits: ["startedReceiving", "startFailedReceiving"]) { $0.startingReceiver(first) },
            State(name: "receiver starting(cancel)", id: first, fits: ["startedReceiving", "startFailedReceiving"]) {
                $0.startingReceiver(first)
                $0.feed(.teardown(TeardownNotice(connectionID: first, reason: "x"), request: $0.request()))
            },
            State(name: "receiver awaitingMedia", id: first, fits: ["observedPlaying", "observedOutputFailed"]) {
                $0.awaitingReceiver(first)
            },
            State(name: "receiver playing", id: first, fits: ["observedLost", "observedOutputFailed"]) { $0.playingReceiver(first) },
            State(name: "receiver lost", id: first, fits: ["observedPlaying", "observedOutputFailed"]) { $0.lostReceiver(first) },
            State(name: "receiver lost+outputFailed", id: first, fits: ["observedPlaying"]) {
                $0.lostReceiver(first)
                $0.feed(.observed(first, .outputFailed(reason: "disk full")))
            },
            State(name: "receiver closing{stop}", id: first, fits: ["stoppedReceiving"]) {
                $0.playingReceiver(first)
                $0.feed(.teardown(TeardownNotice(connectionID: first, reason: "x"), request: $0.request()))
            },
            State(name: "receiver closing{stop,notify}", id: first, fits: ["stoppedReceiving", "notifiedReceiving"]) {
                $0.lostReceiver(first)
                $0.advance(.seconds(8))
            },
        ]
    }

    /// One sample of every outcome input for `id`, by label.
    static func outcomes(for id: ConnectionID) -> [(label: String, input: Input)] {
        let failure = ControlFailure(.busy, "no")
        return [
            ("answered", D.answered(id)),
            ("refused", .refused(id, failure, unusableAnswerFrom: nil)),
            ("refusedUnusable", .refused(id, failure, unusableAnswerFrom: D.endpointB)),
            ("unreachable", .unreachable(id, failure)),
            ("startedSending", .started(id, .sending, mediaPort: nil)),
            ("startedReceiving", .started(id, .receiving, mediaPort: 5_004)),
            ("startFailedSending", .startFailed(id, .sending, message: "x")),
            ("startFailedReceiving", .startFailed(id, .receiving, message: "x")),
            ("observedBuffering", .observed(id, .buffering)),
            ("observedPlaying", .observed(id, .playing)),
            ("observedLost", .observed(id, .lost)),
            ("observedOutputFailed", .observed(id, .outputFailed(reason: "disk full"))),
            ("probedListed", D.listed([id])),
            ("probedAbsent", D.listed([])),
            ("probedRefused", .probed(to: [D.endpointB], .refused)),
            ("probedUnanswered", .probed(to: [D.endpointB], .unanswered)),
            ("stoppedSending", .stopped(id, .sending)),
            ("stoppedReceiving", .stopped(id, .receiving)),
            ("notifiedSending", .notified(id, .sending)),
            ("notifiedReceiving", .notified(id, .receiving)),
        ]
    }

    /// Every input kind for `id` (requests draw fresh request ids from the driver).
    static func inputs(for id: ConnectionID, _ driver: inout D) -> [(label: String, input: Input)] {
        var inputs: [(label: String, input: Input)] = [
            ("connect", driver.connect(driver.freshID())),
            ("connectRTP", driver.connectRTP(driver.freshID())),
            ("offer", driver.offer(id)),
            ("offerOtherPair", driver.offer(id, from: PortReference(peer: "C", port: "out"))),
            ("disconnectID", .disconnect(DisconnectRequest(connectionID: id), request: driver.request())),
            ("disconnectPair", .disconnect(DisconnectRequest(source: D.source), request: driver.request())),
            ("teardown", .teardown(TeardownNotice(connectionID: id, reason: "x"), request: driver.request())),
            ("shutdown", .shutdown(request: driver.request())),
            ("hello", .hello(D.presenceB, from: D.endpointB)),
            ("bye", .bye(D.presenceB)),
            ("discovered", .discovered(KnownPeer(name: "B", id: D.peerB, endpoints: [D.endpointB]))),
            ("vanished", .vanished(name: "B")),
            ("renamed", .renamed(to: "A2")),
            ("sessionKeyChanged", .sessionKeyChanged),
            (
                "upstream",
                .upstream(UpstreamNotice(connectionID: id, upstream: [Pipeline(origin: D.remoteSource, live: false, originHost: nil)]))
            ),
            (
                "upstreamLoop",
                .upstream(
                    UpstreamNotice(
                        connectionID: id, upstream: [Pipeline(ports: [D.localDestination, D.remoteSource], live: nil, originHost: nil)]))
            ),
        ]
        inputs += outcomes(for: id)
        return inputs
    }
}

extension LifecycleStates {
    /// Every input kind by name: a new `Input` case does not compile here until it is named (and sampled).
    static func kind(of input: Input) -> String {
        switch input {
        case .connect(let request, _, _, _, _, _): request.rtpDestination == nil ? "connect" : "connectRTP"
        case .offer: "offer"
        case .disconnect: "disconnect"
        case .teardown: "teardown"
        case .shutdown: "shutdown"
        case .hello: "hello"
        case .bye: "bye"
        case .discovered: "discovered"
        case .vanished: "vanished"
        case .renamed: "renamed"
        case .sessionKeyChanged: "sessionKeyChanged"
        case .upstream: "upstream"
        case .answered: "answered"
        case .refused: "refused"
        case .unreachable: "unreachable"
        case .started: "started"
        case .startFailed: "startFailed"
        case .observed: "observed"
        case .probed: "probed"
        case .stopped: "stopped"
        case .notified: "notified"
        }
    }

    static let allKinds: Set<String> = [
        "connect", "connectRTP", "offer", "disconnect", "teardown", "shutdown", "hello", "bye", "discovered", "vanished", "renamed",
        "upstream", "sessionKeyChanged",
        "answered", "refused", "unreachable", "started", "startFailed", "observed", "probed", "stopped", "notified",
    ]

    /// Every phase by name: a new phase does not compile here until it is named (and reached by a state).
    static func phaseName(_ phase: ConnectionLifecycle.Sending.Phase) -> String {
        switch phase {
        case .verifying: "sender verifying"
        case .offering(nil): "sender offering"
        case .offering: "sender offering(cancel)"
        case .starting(nil): "sender starting"
        case .starting: "sender starting(cancel)"
        case .live: "sender live"
        case .closing: "sender closing"
        }
    }

    static func phaseName(_ phase: ConnectionLifecycle.Receiving.Phase) -> String {
        switch phase {
        case .starting(nil): "receiver starting"
        case .starting: "receiver starting(cancel)"
        case .awaitingMedia: "receiver awaitingMedia"
        case .playing: "receiver playing"
        case .lost: "receiver lost"
        case .closing: "receiver closing"
        }
    }

    static let allPhases: Set<String> = [
        "sender verifying", "sender offering", "sender offering(cancel)", "sender starting", "sender starting(cancel)", "sender live",
        "sender closing", "receiver starting", "receiver starting(cancel)", "receiver awaitingMedia", "receiver playing", "receiver lost",
        "receiver closing",
    ]
}
