import TOMLKit
import TuttiCore
import TuttiEngine
import TuttiIO
import TuttiPeer
import TuttiWire

/// A peer's TOML configuration file (see `configs/`). Flags given on the command line override it.
struct ConfigFile {
    var name: String?
    var controlPort: UInt16?
    var controlAddresses: [String] = []
    var allowRTP: [String] = []
    var period: Int?
    var conceal: String?
    var realtimePriority: Int?
    var stateDirectory: String?
    var discovery: Bool?
    var link: Bool?
    var peers: [ControlEndpoint] = []
    var ports: [PortConfiguration] = []
    var keyFile: String?
    var open: Bool?
    var publicReads: Bool?

    static func load(path: String) throws -> ConfigFile {
        let text: String
        do { text = try TextFile.read(path) } catch {
            throw CLIError("cannot read config \(path): \(String(cString: strerror(error.errno)))")
        }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let error as TOMLParseError {
            throw CLIError("config \(path): \(error.description) at line \(error.source.begin.line)")
        } catch {
            throw CLIError("config \(path): \(error)")
        }
        var config = ConfigFile()
        let known: Set<String> = [
            "name", "control-port", "control-address", "allow-rtp", "period", "conceal", "realtime-priority", "state-dir", "discovery",
            "link", "peers", "key-file", "open", "public-reads",
            "sender",
            "receiver", "filter",
        ]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) {
            throw CLIError("config \(path): unknown key '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        config.name = try string(table, "name", path)
        if let port = try integer(table, "control-port", path) {
            guard (0...65_535).contains(port) else { throw CLIError("config \(path): control-port must be 0–65535") }
            config.controlPort = UInt16(port)
        }
        config.controlAddresses = try strings(table, "control-address", path, each: "an IP address")
        config.allowRTP = try strings(table, "allow-rtp", path, each: "an address prefix")
        config.period = try integer(table, "period", path)
        config.conceal = try string(table, "conceal", path)
        config.realtimePriority = try integer(table, "realtime-priority", path)
        let base = directory(of: path)
        config.stateDirectory = try string(table, "state-dir", path).map { resolve($0, relativeTo: base) }
        if let value = table["discovery"] {
            guard let flag = value.bool else { throw CLIError("config \(path): discovery must be true or false") }
            config.discovery = flag
        }
        config.keyFile = try string(table, "key-file", path).map { resolve($0, relativeTo: base) }
        for (key, keyPath) in [("open", \ConfigFile.open), ("public-reads", \ConfigFile.publicReads)] {
            guard let value = table[key] else { continue }
            guard let flag = value.bool else { throw CLIError("config \(path): \(key) must be true or false") }
            config[keyPath: keyPath] = flag
        }
        if let value = table["link"] {
            guard let flag = value.bool else { throw CLIError("config \(path): link must be true or false") }
            config.link = flag
        }
        if let value = table["peers"] {
            guard let array = value.array else { throw CLIError("config \(path): peers must be a list of \"HOST:PORT\"") }
            for item in array {
                guard let text = item.string, let endpoint = ControlEndpoint(parsing: text) else {
                    throw CLIError("config \(path): peers entry is not \"HOST:PORT\"")
                }
                config.peers.append(endpoint)
            }
        }
        for (key, kind) in [("sender", PortKind.sender), ("receiver", PortKind.receiver), ("filter", PortKind.filter)] {
            guard let value = table[key] else { continue }
            guard let array = value.array else { throw CLIError("config \(path): use [[\(key)]] tables for ports") }
            for item in array {
                guard let entry = item.table else { throw CLIError("config \(path): use [[\(key)]] tables for ports") }
                var values = [String: String]()
                for field in entry.keys {
                    let raw = entry[field]!
                    let mapped = field == "source" || field == "sink" ? "kind" : field == "sample-rates" ? "rates" : field
                    if let text = raw.string {
                        values[mapped] = text
                    } else if let number = raw.int {
                        values[mapped] = String(number)
                    } else if let number = raw.double {
                        values[mapped] = String(number)
                    } else if let flag = raw.bool {
                        values[mapped] = String(flag)
                    } else if let list = raw.array {
                        values[mapped] = list.map { $0.int.map(String.init) ?? $0.string ?? "?" }.joined(separator: "/")
                    } else {
                        throw CLIError("config \(path): [[\(key)]] field '\(field)' has an unsupported type")
                    }
                }
                // A file named in the config is found beside the config, wherever the peer is started.
                if let file = values["path"] { values["path"] = resolve(file, relativeTo: base) }
                config.ports.append(try PortSpecification.make(values, kind: kind))
            }
        }
        return config
    }

    /// A key that holds one string or a list of them (`each` names what one is, for the error); [] when absent.
    private static func strings(_ table: TOMLTable, _ key: String, _ path: String, each: String) throws -> [String] {
        guard let value = table[key] else { return [] }
        if let text = value.string { return [text] }
        guard let list = value.array, list.allSatisfy({ $0.string != nil }) else {
            throw CLIError("config \(path): \(key) must be \(each) or a list of them")
        }
        return list.compactMap(\.string)
    }

    /// The absolute directory that holds the file at `path`.
    static func directory(of path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        guard let slash = absolute.lastIndex(of: "/") else { return "." }
        let directory = String(absolute[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// `path` as written in a config in `directory`: absolute paths stay, `~/…` is under $HOME, anything
    /// else is relative to the config's directory.
    static func resolve(_ path: String, relativeTo directory: String) -> String {
        if path.hasPrefix("/") { return path }
        if path == "~" || path.hasPrefix("~/"), let home = getenv("HOME") { return String(cString: home) + path.dropFirst() }
        var relative = Substring(path)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        return directory == "/" ? "/" + relative : directory + "/" + relative
    }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func string(_ table: TOMLTable, _ key: String, _ path: String) throws -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else { throw CLIError("config \(path): \(key) must be a string") }
        return text
    }

    private static func integer(_ table: TOMLTable, _ key: String, _ path: String) throws -> Int? {
        guard let value = table[key] else { return nil }
        guard let number = value.int else { throw CLIError("config \(path): \(key) must be an integer") }
        return number
    }
}

#if canImport(Glibc)
import Glibc
#endif
