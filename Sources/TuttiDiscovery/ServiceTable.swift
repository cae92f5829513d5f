/// The browse results, merged per instance name, and the diff against what was last reported.
///
/// Pure bookkeeping with no Avahi calls, so it can be unit-tested. Not thread-safe: the engine
/// owns one and only touches it with Avahi's poll lock held.
///
/// Avahi reports one browse item per (interface, IP protocol, name, domain) and we run one
/// resolver per browse item and address family; each resolver yields at most one address. An
/// instance's merged value takes host name and port from the most recently updated resolution
/// and the union of every resolution's addresses.
///
/// TXT comes from a TXT record browser per browse item when one reports: it sees a new TXT
/// record as soon as it arrives, while a resolver only reports it after the old record has been
/// flushed from the cache (one second later, RFC 6762 §10.2). The TXT record most recently added
/// and still present wins; without any, the latest resolution's TXT is used.
struct ServiceTable {
    /// One browse result as Avahi reports it.
    struct BrowseKey: Hashable, Sendable {
        var interface: Int32
        var ipProtocol: Int32
        var name: String
        var domain: String
    }

    /// One resolver: a browse item and the address family it resolves (`AVAHI_PROTO_INET` or `_INET6`).
    struct ResolutionID: Hashable, Sendable {
        var item: BrowseKey
        var addressFamily: Int32
    }

    /// What one resolver found.
    struct Resolution: Equatable, Sendable {
        var hostName: String
        var addresses: [String]
        var port: UInt16
        var txt: [String: String]
    }

    /// One TXT record (raw entries) present in the daemon's cache for a browse item.
    private struct TXTRecordID: Hashable {
        var item: BrowseKey
        var entries: [[UInt8]]
    }

    private struct Instance {
        var items: Set<BrowseKey> = []
        var resolutions: [ResolutionID: (resolution: Resolution, sequence: UInt64)] = [:]
        var txtRecords: [TXTRecordID: UInt64] = [:]
        var reported: DiscoveredService?
    }

    private var instances: [String: Instance] = [:]
    private var dirty: Set<String> = []
    private var sequence: UInt64 = 0

    /// Whether some changes have not been collected yet.
    var hasChanges: Bool { !dirty.isEmpty }

    /// Whether Avahi still reports at least one browse item for `name`.
    func isBrowsed(_ name: String) -> Bool {
        instances[name]?.items.isEmpty == false
    }

    /// Records a browse item; returns false if it was already known.
    mutating func addBrowseItem(_ key: BrowseKey) -> Bool {
        let inserted = instances[key.name, default: Instance()].items.insert(key).inserted
        if inserted { dirty.insert(key.name) }
        return inserted
    }

    /// Forgets a browse item and whatever its resolvers found.
    mutating func removeBrowseItem(_ key: BrowseKey) {
        guard var instance = instances[key.name] else { return }
        instance.items.remove(key)
        instance.resolutions = instance.resolutions.filter { $0.key.item != key }
        instance.txtRecords = instance.txtRecords.filter { $0.key.item != key }
        instances[key.name] = instance
        dirty.insert(key.name)
    }

    /// Stores (or replaces) what a resolver found. Ignored if its browse item is unknown.
    mutating func setResolution(_ resolution: Resolution, for id: ResolutionID) {
        guard instances[id.item.name]?.items.contains(id.item) == true else { return }
        sequence &+= 1
        instances[id.item.name]?.resolutions[id] = (resolution, sequence)
        dirty.insert(id.item.name)
    }

    /// Drops what a resolver found (it failed or timed out); the browse item stays.
    mutating func clearResolution(for id: ResolutionID) {
        guard instances[id.item.name]?.resolutions.removeValue(forKey: id) != nil else { return }
        dirty.insert(id.item.name)
    }

    /// A TXT record browser saw `entries` appear for `item`. Ignored if the item is unknown.
    mutating func addTXTRecord(_ entries: [[UInt8]], for item: BrowseKey) {
        guard instances[item.name]?.items.contains(item) == true else { return }
        sequence &+= 1
        instances[item.name]?.txtRecords[TXTRecordID(item: item, entries: entries)] = sequence
        dirty.insert(item.name)
    }

    /// A TXT record browser saw `entries` go away for `item`.
    mutating func removeTXTRecord(_ entries: [[UInt8]], for item: BrowseKey) {
        let id = TXTRecordID(item: item, entries: entries)
        guard instances[item.name]?.txtRecords.removeValue(forKey: id) != nil else { return }
        dirty.insert(item.name)
    }

    /// Forgets every browse item (browsing stopped or the daemon went away).
    mutating func removeAll() {
        for name in instances.keys {
            instances[name]?.items.removeAll()
            instances[name]?.resolutions.removeAll()
            instances[name]?.txtRecords.removeAll()
            dirty.insert(name)
        }
    }

    /// The merged value for `name`, or nil while nothing is resolved.
    func merged(_ name: String) -> DiscoveredService? {
        guard let instance = instances[name],
            let latest = instance.resolutions.values.max(by: { $0.sequence < $1.sequence })?.resolution
        else { return nil }
        let all = instance.resolutions.values.sorted { $0.sequence < $1.sequence }.flatMap(\.resolution.addresses)
        let txt = instance.txtRecords.max { $0.value < $1.value }.map { TXTRecord.decode($0.key.entries) } ?? latest.txt
        return DiscoveredService(
            instanceName: name, hostName: latest.hostName, addresses: AddressOrdering.ordered(all),
            port: latest.port, txt: txt)
    }

    /// The events that bring a consumer from what was last reported to the current state, sorted
    /// by instance name; marks them reported.
    /// - an instance with no browse item left that had been reported → `serviceRemoved`;
    /// - an instance whose merged value differs from the last report → `serviceFound`;
    /// - an instance still browsed but with no resolution (all resolvers failed) keeps its last
    ///   report: it is only removed when Avahi removes its last browse item.
    mutating func collectChanges() -> [DiscoveryEvent] {
        var events: [DiscoveryEvent] = []
        for name in dirty.sorted() {
            guard var instance = instances[name] else { continue }
            if instance.items.isEmpty {
                if instance.reported != nil { events.append(.serviceRemoved(instanceName: name)) }
                instances[name] = nil
                continue
            }
            if let value = merged(name), value != instance.reported {
                events.append(.serviceFound(value))
                instance.reported = value
                instances[name] = instance
            }
        }
        dirty.removeAll()
        return events
    }
}
