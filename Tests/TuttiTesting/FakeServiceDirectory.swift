import Synchronization
import TuttiDiscovery

/// An in-memory DNS-SD network, as Avahi behaves on one link: a published name that another member holds is
/// renamed ("x" → "x #2", `renamed` then `published`); browsers are told of every service found (their own too)
/// and removed; a member that stops withdraws its service. Events are delivered at once, in order, on the
/// caller's thread. Members get their discovery from `discovery(host:)`.
///
/// Thread-safe: yes (a mutex around the directory; events are delivered outside it).
public final class FakeServiceDirectory: Sendable {
    struct Service {
        var owner: ObjectIdentifier
        var value: DiscoveredService
    }

    struct State {
        var services: [String: Service] = [:]
        var browsers: [ObjectIdentifier: @Sendable (DiscoveryEvent) -> Void] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// The discovery factory of a member whose services resolve to `host`.
    package func discovery(host: String) -> ServiceDiscoveryFactory {
        { _, onEvent throws(DiscoveryError) in
            let member = Member(directory: self, host: host, onEvent: onEvent)
            onEvent(.daemonAvailable)
            return member
        }
    }

    /// The names published now.
    public var publishedNames: [String] { state.withLock { $0.services.keys.sorted() } }

    fileprivate func publish(_ member: Member, name: String, port: UInt16, txt: [String: String]) {
        let owner = ObjectIdentifier(member)
        let (chosen, browsers, service): (String, [@Sendable (DiscoveryEvent) -> Void], DiscoveredService) = state.withLock { state in
            for (existing, service) in state.services where service.owner == owner { state.services[existing] = nil }
            var chosen = name
            var suffix = 2
            while state.services[chosen] != nil {
                chosen = "\(name) #\(suffix)"
                suffix += 1
            }
            let service = DiscoveredService(
                instanceName: chosen, hostName: "\(member.host).local", addresses: [member.host], port: port, txt: txt)
            state.services[chosen] = Service(owner: owner, value: service)
            return (chosen, Array(state.browsers.values), service)
        }
        if chosen != name { member.onEvent(.renamed(from: name, to: chosen)) }
        member.onEvent(.published(name: chosen))
        for browser in browsers { browser(.serviceFound(service)) }
    }

    fileprivate func browse(_ member: Member) {
        let found = state.withLock { state in
            state.browsers[ObjectIdentifier(member)] = member.onEvent
            return state.services.values.map(\.value).sorted { $0.instanceName < $1.instanceName }
        }
        for service in found { member.onEvent(.serviceFound(service)) }
    }

    fileprivate func withdraw(_ member: Member) {
        let owner = ObjectIdentifier(member)
        let (names, browsers) = state.withLock { state in
            state.browsers[owner] = nil
            let names = state.services.filter { $0.value.owner == owner }.map(\.key).sorted()
            for name in names { state.services[name] = nil }
            return (names, Array(state.browsers.values))
        }
        for name in names { for browser in browsers { browser(.serviceRemoved(instanceName: name)) } }
    }

    /// One member's discovery.
    final class Member: ServiceDiscovering {
        let directory: FakeServiceDirectory
        let host: String
        let onEvent: @Sendable (DiscoveryEvent) -> Void
        private let stopped = Atomic(false)

        init(directory: FakeServiceDirectory, host: String, onEvent: @escaping @Sendable (DiscoveryEvent) -> Void) {
            self.directory = directory
            self.host = host
            self.onEvent = onEvent
        }

        func publish(name: String, port: UInt16, txt: [String: String]) {
            guard !stopped.load(ordering: .acquiring) else { return }
            directory.publish(self, name: name, port: port, txt: txt)
        }

        func startBrowsing() {
            guard !stopped.load(ordering: .acquiring) else { return }
            directory.browse(self)
        }

        func stop() {
            guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
            directory.withdraw(self)
        }
    }
}
