import CAvahi

/// Everything that talks to Avahi: the client, our entry group, the browser and its resolvers,
/// and the merged browse results.
///
/// Confinement: every property and method is used only with the threaded poll's mutex held,
/// either on Avahi's thread inside a callback (the poll holds its mutex while dispatching) or on
/// a caller's thread inside ``ServiceDiscovery``, which takes the mutex first. Nothing here takes
/// the lock itself, so callbacks never deadlock on it. C callbacks reach the engine through an
/// unretained pointer; ``ServiceDiscovery`` owns the engine and outlives every Avahi object.
final class AvahiEngine {
    struct PublishRequest: Equatable {
        var name: String
        var port: UInt16
        var txt: [String: String]
    }

    /// Pause before trying again to reach the daemon or to recreate a failed group or browser.
    static let retryDelayMilliseconds = 1000
    /// Resolver results arriving within this window are reported as one `serviceFound`.
    static let coalesceMilliseconds = 5

    private let pollAPI: UnsafePointer<AvahiPoll>
    private let serviceType: String
    private let sink: EventSink

    private var stopped = false
    private var retryTimer: OpaquePointer?
    private var retryDeadline: Int64?
    private var flushTimer: OpaquePointer?
    private var flushArmed = false

    private var client: OpaquePointer?
    private var creatingClient = false
    private var clientFailedDuringCreation = false
    /// Clients that failed; freed from the retry timer, never inside their own callback.
    private var retiredClients: [OpaquePointer] = []
    /// nil until the first connection attempt has a result; drives once-per-outage events.
    private var daemonReachable: Bool?

    private var desired: PublishRequest?
    /// Set while probing a name again after a collision with a peer that was probing it at the same time.
    private var probingAgain = false
    /// The name we register under: `desired.name` or an alternative after a collision.
    private var candidateName: String?
    private var group: OpaquePointer?
    /// What the entry group currently holds (committed), with the name actually used.
    private var loaded: PublishRequest?
    private var established = false

    private var wantsBrowsing = false
    private var browser: OpaquePointer?
    private var resolvers: [OpaquePointer: ServiceTable.ResolutionID] = [:]
    private var txtBrowsers: [OpaquePointer: ServiceTable.BrowseKey] = [:]
    private var table = ServiceTable()

    init(pollAPI: UnsafePointer<AvahiPoll>, serviceType: String, sink: EventSink) {
        self.pollAPI = pollAPI
        self.serviceType = serviceType
        self.sink = sink
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> AvahiEngine? {
        guard let userdata else { return nil }
        return Unmanaged<AvahiEngine>.fromOpaque(userdata).takeUnretainedValue()
    }

    // MARK: Lifecycle

    /// Creates the timers and the first client. Returns false if Avahi could not allocate a timer.
    func start() -> Bool {
        retryTimer = makeTimer()
        flushTimer = makeTimer()
        guard retryTimer != nil, flushTimer != nil else { return false }
        createClient()
        return true
    }

    /// Frees every Avahi object. Call once, after the poll thread has stopped, with the lock held.
    /// Freeing the entry group withdraws our service: the daemon sends goodbye packets at once.
    func teardown() {
        guard !stopped else { return }
        stopped = true
        if let retryTimer { pollAPI.pointee.timeout_free?(retryTimer) }
        if let flushTimer { pollAPI.pointee.timeout_free?(flushTimer) }
        retryTimer = nil
        flushTimer = nil
        if let group { avahi_entry_group_free(group) }
        group = nil
        loaded = nil
        established = false
        freeAllResolvers()
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
        if let client { avahi_client_free(client) }
        client = nil
        freeRetiredClients()
        table = ServiceTable()
    }

    // MARK: Requests from ServiceDiscovery (lock held)

    var currentName: String? { established ? loaded?.name : nil }

    func publish(name: String, port: UInt16, txt: [String: String]) {
        guard !stopped else { return }
        let request = PublishRequest(name: ServiceNames.sanitize(name), port: port, txt: txt)
        guard request != desired else { return }
        let previous = desired
        desired = request
        if let previous, previous.name == request.name, previous.port == request.port,
            let group, var current = loaded, current.port == request.port
        {
            // Only the TXT record changed: update it in place (no new probing, no goodbye).
            let list = AvahiBridge.makeStringList(TXTRecord.encode(txt))
            defer { avahi_string_list_free(list) }
            let result = avahi_entry_group_update_service_txt_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                current.name, serviceType, nil, list)
            if result >= 0 {
                current.txt = txt
                loaded = current
                return
            }
        }
        if previous?.name != request.name { candidateName = nil }
        loaded = nil
        established = false
        ensureRegistered()
    }

    func startBrowsing() {
        guard !stopped else { return }
        wantsBrowsing = true
        ensureBrowser()
    }

    // MARK: Client

    private func createClient() {
        var error: Int32 = 0
        creatingClient = true
        clientFailedDuringCreation = false
        let created = avahi_client_new(
            pollAPI, AVAHI_CLIENT_NO_FAIL,
            { client, state, userdata in AvahiEngine.from(userdata)?.clientChanged(client, state) },
            context, &error)
        creatingClient = false
        guard let created else {
            client = nil
            markUnreachable(AvahiBridge.errorText(error))
            scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds)
            return
        }
        if clientFailedDuringCreation {
            retiredClients.append(created)
        } else {
            client = created
        }
    }

    private func clientChanged(_ changed: OpaquePointer?, _ state: AvahiClientState) {
        guard let changed, !stopped else { return }
        if creatingClient, client == nil { client = changed }
        guard changed == client else { return }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            markReachable()
            ensureBrowser()
            ensureRegistered()
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            // The daemon is (re)registering its host name: browse already, but withdraw our
            // service until S_RUNNING.
            markReachable()
            withdrawService()
            ensureBrowser()
        case AVAHI_CLIENT_CONNECTING:
            // NO_FAIL and the daemon is not there: the client waits for it by itself.
            markUnreachable(AvahiBridge.errorText(Int32(AVAHI_ERR_NO_DAEMON)))
            dropObjects()
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(changed)
            markUnreachable(AvahiBridge.errorText(error))
            dropObjects()
            client = nil
            if creatingClient {
                clientFailedDuringCreation = true
            } else {
                retiredClients.append(changed)
            }
            // Disconnected (daemon or bus went away): reconnect at once with a new client, which
            // waits in CONNECTING for the daemon. Anything else: try again a little later.
            scheduleRetry(afterMilliseconds: error == Int32(AVAHI_ERR_DISCONNECTED) ? 0 : Self.retryDelayMilliseconds)
        default:
            break
        }
    }

    private func markReachable() {
        guard daemonReachable != true else { return }
        daemonReachable = true
        sink.emit(.daemonAvailable)
    }

    private func markUnreachable(_ reason: String) {
        guard daemonReachable != false else { return }
        daemonReachable = false
        sink.emit(.daemonUnavailable(reason: reason))
    }

    /// Forgets every daemon-side object (they died with the daemon) and reports every known
    /// service as removed.
    private func dropObjects() {
        if let group { avahi_entry_group_free(group) }
        group = nil
        loaded = nil
        established = false
        freeAllResolvers()
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
        table.removeAll()
        flush()
    }

    private func freeRetiredClients() {
        for retired in retiredClients { avahi_client_free(retired) }
        retiredClients.removeAll()
    }

    private func isConnected(_ client: OpaquePointer) -> Bool {
        switch avahi_client_get_state(client) {
        case AVAHI_CLIENT_S_RUNNING, AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION: return true
        default: return false
        }
    }

    // MARK: Publishing

    private func ensureRegistered() {
        guard !stopped, let desired, loaded == nil, let client,
            avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING
        else { return }
        if let group {
            avahi_entry_group_reset(group)
        } else {
            group = avahi_entry_group_new(
                client,
                { group, state, userdata in AvahiEngine.from(userdata)?.groupChanged(group, state) },
                context)
        }
        guard let group else {
            scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds)
            return
        }
        established = false
        let list = AvahiBridge.makeStringList(TXTRecord.encode(desired.txt))
        defer { avahi_string_list_free(list) }
        var name = candidateName ?? desired.name
        var result: Int32 = 0
        for _ in 0..<32 {
            result = avahi_entry_group_add_service_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                name, serviceType, nil, nil, desired.port, list)
            // A service of this name is already registered on this very daemon.
            guard result == Int32(AVAHI_ERR_COLLISION) else { break }
            let alternative = AvahiBridge.alternativeServiceName(name)
            sink.emit(.renamed(from: name, to: alternative))
            name = alternative
        }
        candidateName = name
        if result >= 0 { result = avahi_entry_group_commit(group) }
        guard result >= 0 else {
            avahi_entry_group_reset(group)
            scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds)
            return
        }
        loaded = PublishRequest(name: name, port: desired.port, txt: desired.txt)
    }

    private func withdrawService() {
        if let group { avahi_entry_group_reset(group) }
        loaded = nil
        established = false
    }

    private func groupChanged(_ changed: OpaquePointer?, _ state: AvahiEntryGroupState) {
        guard let changed, changed == group, !stopped else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            probingAgain = false
            guard let loaded, !established else { return }
            established = true
            sink.emit(.published(name: loaded.name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            guard desired != nil, let old = loaded?.name ?? candidateName else { return }
            if !probingAgain, !table.isBrowsed(old) {
                // Nobody holds the name yet: another peer is probing it at this very moment, and Avahi reports
                // the collision to both. Probe it once more after a random pause, so that the first to finish
                // keeps it and only the other renames (instead of both renaming in step, again and again).
                probingAgain = true
                loaded = nil
                established = false
                candidateName = old
                avahi_entry_group_reset(changed)
                scheduleRetry(afterMilliseconds: Int.random(in: 50...1_250))
                return
            }
            probingAgain = false
            let alternative = AvahiBridge.alternativeServiceName(old)
            candidateName = alternative
            loaded = nil
            established = false
            sink.emit(.renamed(from: old, to: alternative))
            ensureRegistered()
        case AVAHI_ENTRY_GROUP_FAILURE:
            avahi_entry_group_free(changed)
            group = nil
            loaded = nil
            established = false
            scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds)
        default:
            break
        }
    }

    // MARK: Browsing

    private func ensureBrowser() {
        guard !stopped, wantsBrowsing, browser == nil, let client, isConnected(client) else { return }
        browser = avahi_service_browser_new(
            client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), serviceType, nil,
            AVAHI_LOOKUP_USE_MULTICAST,
            { browser, interface, ipProtocol, event, name, type, domain, _, userdata in
                AvahiEngine.from(userdata)?.browserEvent(browser, interface, ipProtocol, event, name, type, domain)
            },
            context)
        if browser == nil { scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds) }
    }

    private func browserEvent(
        _ changed: OpaquePointer?, _ interface: AvahiIfIndex, _ ipProtocol: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        guard let changed, changed == browser, !stopped else { return }
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain else { return }
            let key = ServiceTable.BrowseKey(
                interface: interface, ipProtocol: ipProtocol, name: String(cString: name), domain: String(cString: domain))
            guard table.addBrowseItem(key) else { return }
            let client = avahi_service_browser_get_client(changed)
            // One resolver per address family, so both A and AAAA are found whatever the
            // transport; each keeps running and reports again when SRV/TXT/address change.
            for family in [AvahiProtocol(AVAHI_PROTO_INET), AvahiProtocol(AVAHI_PROTO_INET6)] {
                let resolver = avahi_service_resolver_new(
                    client, interface, ipProtocol, name, type, domain, family, AVAHI_LOOKUP_USE_MULTICAST,
                    { resolver, interface, _, event, _, _, _, host, address, port, txt, _, userdata in
                        AvahiEngine.from(userdata)?.resolverEvent(resolver, interface, event, host, address, port, txt)
                    },
                    context)
                if let resolver { resolvers[resolver] = ServiceTable.ResolutionID(item: key, addressFamily: family) }
            }
            // And a TXT record browser, which sees a new TXT record at once (see ServiceTable).
            var fullName = [CChar](repeating: 0, count: Int(AVAHI_DOMAIN_NAME_MAX))
            if avahi_service_name_join(&fullName, fullName.count, name, type, domain) >= 0,
                let txtBrowser = avahi_record_browser_new(
                    client, interface, ipProtocol, fullName, UInt16(AVAHI_DNS_CLASS_IN),
                    UInt16(AVAHI_DNS_TYPE_TXT), AVAHI_LOOKUP_USE_MULTICAST,
                    { browser, _, _, event, _, _, _, rdata, size, _, userdata in
                        AvahiEngine.from(userdata)?.txtRecordEvent(browser, event, rdata, size)
                    },
                    context)
            {
                txtBrowsers[txtBrowser] = key
            }
            scheduleFlush()
        case AVAHI_BROWSER_REMOVE:
            guard let name, let domain else { return }
            let key = ServiceTable.BrowseKey(
                interface: interface, ipProtocol: ipProtocol, name: String(cString: name), domain: String(cString: domain))
            for (resolver, id) in resolvers where id.item == key {
                avahi_service_resolver_free(resolver)
                resolvers[resolver] = nil
            }
            for (txtBrowser, item) in txtBrowsers where item == key {
                avahi_record_browser_free(txtBrowser)
                txtBrowsers[txtBrowser] = nil
            }
            table.removeBrowseItem(key)
            // The last item of an instance going away is reported at once; partial removals
            // (one interface or protocol) are coalesced with whatever follows.
            if table.isBrowsed(key.name) { scheduleFlush() } else { flush() }
        case AVAHI_BROWSER_FAILURE:
            browser = nil
            avahi_service_browser_free(changed)
            freeAllResolvers()
            table.removeAll()
            flush()
            scheduleRetry(afterMilliseconds: Self.retryDelayMilliseconds)
        default:
            break
        }
    }

    private func resolverEvent(
        _ resolver: OpaquePointer?, _ interface: AvahiIfIndex, _ event: AvahiResolverEvent,
        _ host: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard let resolver, let id = resolvers[resolver], !stopped else { return }
        switch event {
        case AVAHI_RESOLVER_FOUND:
            let text = address.flatMap { AvahiBridge.addressText($0, interface: interface) }
            let resolution = ServiceTable.Resolution(
                hostName: host.map { String(cString: $0) } ?? "",
                addresses: text.map { [$0] } ?? [],
                port: port,
                txt: TXTRecord.decode(AvahiBridge.entries(of: txt)))
            table.setResolution(resolution, for: id)
        default:
            // Failure or timeout: this resolver contributes nothing for now. It stays alive and
            // reports again if the records come back.
            table.clearResolution(for: id)
        }
        scheduleFlush()
    }

    private func txtRecordEvent(
        _ txtBrowser: OpaquePointer?, _ event: AvahiBrowserEvent, _ rdata: UnsafeRawPointer?, _ size: Int
    ) {
        guard let txtBrowser, let item = txtBrowsers[txtBrowser], !stopped else { return }
        let raw = rdata.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
        let entries = TXTRecord.entries(fromWire: raw)
        switch event {
        case AVAHI_BROWSER_NEW: table.addTXTRecord(entries, for: item)
        case AVAHI_BROWSER_REMOVE: table.removeTXTRecord(entries, for: item)
        default: return  // failure: the resolvers' TXT is used instead
        }
        scheduleFlush()
    }

    /// Frees every resolver and TXT record browser.
    private func freeAllResolvers() {
        for resolver in resolvers.keys { avahi_service_resolver_free(resolver) }
        resolvers.removeAll()
        for txtBrowser in txtBrowsers.keys { avahi_record_browser_free(txtBrowser) }
        txtBrowsers.removeAll()
    }

    // MARK: Timers

    private func makeTimer() -> OpaquePointer? {
        pollAPI.pointee.timeout_new?(
            pollAPI, nil,
            { timer, userdata in AvahiEngine.from(userdata)?.timerFired(timer) },
            context)
    }

    private func arm(_ timer: OpaquePointer?, afterMilliseconds milliseconds: Int) {
        guard let timer else { return }
        var deadline = AvahiBridge.deadline(afterMilliseconds: milliseconds)
        pollAPI.pointee.timeout_update?(timer, &deadline)
    }

    private static func nowMilliseconds() -> Int64 {
        let now = AvahiBridge.deadline(afterMilliseconds: 0)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_usec) / 1000
    }

    /// Arms the retry timer unless it is already due sooner.
    private func scheduleRetry(afterMilliseconds milliseconds: Int) {
        guard !stopped else { return }
        let due = Self.nowMilliseconds() + Int64(milliseconds)
        if let retryDeadline, retryDeadline <= due { return }
        retryDeadline = due
        arm(retryTimer, afterMilliseconds: milliseconds)
    }

    private func scheduleFlush() {
        guard !stopped, !flushArmed else { return }
        flushArmed = true
        arm(flushTimer, afterMilliseconds: Self.coalesceMilliseconds)
    }

    private func flush() {
        for event in table.collectChanges() { sink.emit(event) }
    }

    private func timerFired(_ timer: OpaquePointer?) {
        guard !stopped, let timer else { return }
        if timer == retryTimer {
            retryDeadline = nil
            freeRetiredClients()
            if client == nil {
                createClient()
            } else {
                ensureBrowser()
                ensureRegistered()
            }
        } else if timer == flushTimer {
            flushArmed = false
            flush()
        }
    }
}
