// tutti-link-agreement: the Link lab tests' analysis of their peers' JSON-lines sample logs
// (scripts/link/lib.sh; aalink_peer.py and `tutti clock --serve` write them). Lab-only, so not a `tutti`
// subcommand. The figures' definitions are in TuttiAnalysis (PhaseAgreement, BeatContinuity).
//
//   tutti-link-agreement [options] FILE...   phase agreement between the logs' sample streams (`-`: stdin)
//       --quantum Q        beats (default: from the samples, else 4)
//       --step-ms MS       grid step (1)
//       --max-gap-ms MS    skip instants whose neighbouring samples are further apart (5)
//       --max-dt-us US     drop samples whose bracket dt is wider (50; 0 keeps all)
//       --start-ns NS, --end-ns NS   only instants in [NS, NS)
//       --skip-s S         skip the first S seconds of the overlap
//       --settled-only     skip instants where the streams' tempos differ
//       --ref NAME         compare every stream with this one only (default: all pairs)
//       --segments-us T    also split each pair's error where it steps by more than T us
//       --guard-ms MS      with --segments-us: leave out instants this close to a step (5)
//       --json FILE        write the figures as JSON to FILE ('-': JSON on stdout, summaries on stderr)
//     A line is a sample when it has "t" (CLOCK_MONOTONIC ns), "tempo" and "phase" or "beat", and its "ev"
//     (if any) is "sample" or "state"; optional: "src" (stream name), "quantum", "dt" (bracket width, ns).
//     Exit 1 when no instant was common to a pair.
//   tutti-link-agreement jumps FILE [--start-ns NS] [--end-ns NS] [--field beat] [--max-dt-us 10]
//     The continuity of one peer's beat timeline, as JSON: n, dropped, max_abs_jump_us, worst_jump_us,
//     worst_t, max_gap_ms, tempos.
//   tutti-link-agreement series FILE|-
//     The summary of a series of numbers, one a line (blank lines skipped), as JSON: n, min, median, p95, p99,
//     max, mean (TuttiAnalysis SeriesSummary: nearest-rank percentiles). Exit 1 for a line that is not a number.
//   tutti-link-agreement get FILE|- KEY[.KEY...]
//     One value of a JSON file (a number indexes a list): a string or number as it is, anything else as JSON;
//     exit 1 when it is missing.
//
// Exit status: 0; 1 with one line on standard error for an unreadable input or nothing to measure; 2 for a
// usage error.

import Foundation
import TuttiAnalysis

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("tutti-link-agreement: \(message)\n".utf8))
    exit(status)
}

func usageError(_ message: String) -> Never {
    fail(
        "\(message)\nusage: tutti-link-agreement [options] FILE... | jumps FILE [options] | series FILE|- | get FILE|- KEY[.KEY...]",
        status: 2)
}

/// `value` rounded to `digits` decimals as Python's `round` does (the exact binary value, correctly rounded).
func rounded(_ value: Double, _ digits: Int) -> Double {
    Double(String(format: "%.\(digits)f", value)) ?? value
}

func contents(_ path: String) -> Data {
    if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    return data
}

/// The fields of a log line this tool reads (JSONDecoder is several times faster than JSONSerialization here).
struct Event: Decodable {
    /// `nil` when absent; a present `ev` that is not a string reads as "".
    var ev: String?
    var t: Double?
    var tempo: Double?
    var phase: Double?
    var beat: Double?
    var src: String?
    var quantum: Double?
    var dt: Double?
    /// The field `jumps --field` names (beat by default).
    var field: Double?

    static let fieldKey = CodingUserInfoKey(rawValue: "field")!

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        func number(_ name: String) -> Double? { try? container.decodeIfPresent(Double.self, forKey: Key(name)) }
        if container.contains(Key("ev")) { ev = (try? container.decode(String.self, forKey: Key("ev"))) ?? "" }
        t = number("t")
        tempo = number("tempo")
        phase = number("phase")
        beat = number("beat")
        quantum = number("quantum")
        dt = number("dt")
        field = (decoder.userInfo[Event.fieldKey] as? String).flatMap(number)
        if container.contains(Key("src")) {
            src = (try? container.decode(String.self, forKey: Key("src"))) ?? number("src").map { "\($0)" } ?? "null"
        }
    }
}

/// The JSON objects among a log's lines (every other line is skipped).
func events(_ path: String, field: String? = nil) -> [Event] {
    let decoder = JSONDecoder()
    if let field { decoder.userInfo[Event.fieldKey] = field }
    let data = contents(path)
    return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
        // JSON objects only, after any leading blanks.
        guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }),
            line[first] == UInt8(ascii: "{")
        else { return nil }
        return try? decoder.decode(Event.self, from: Data(line[first...]))
    }
}

/// Options as argparse reads them: `--name VALUE` or `--name=VALUE`, flags, and the rest positional.
struct Arguments {
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positional: [String] = []

    init(_ arguments: [String], valued: Set<String>, flags known: Set<String>) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            if known.contains(argument) {
                flags.insert(argument)
            } else if valued.contains(parts[0]) {
                if parts.count == 2 {
                    values[parts[0]] = parts[1]
                } else if let value = rest.popFirst() {
                    values[parts[0]] = value
                } else {
                    usageError("\(argument) needs a value")
                }
            } else {
                usageError("unknown option \(argument)")
            }
        }
    }

    func double(_ name: String, _ fallback: Double) -> Double { double(name) ?? fallback }
    func double(_ name: String) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text) else { usageError("\(name): not a number: \(text)") }
        return value
    }
    func int(_ name: String) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text) else { usageError("\(name): not an integer: \(text)") }
        return value
    }
}

// MARK: JSON output (keys sorted; agreement.py's names)

struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A JSON object of named values of any type (the stream and pair names are keys).
struct Object: Encodable {
    var entries: [(String, any Encodable)] = []

    mutating func add(_ key: String, _ value: (any Encodable)?) {
        if let value { entries.append((key, value)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in entries { try container.encode(value, forKey: Key(key)) }
    }
}

func object(_ figures: PhaseAgreement.Figures) -> Object {
    var result = Object()
    result.add("n", figures.n)
    result.add("signed_median_us", figures.signedMedianMicroseconds.map { rounded($0, 3) })
    result.add("median_us", figures.medianMicroseconds.map { rounded($0, 3) })
    result.add("p95_us", figures.p95Microseconds.map { rounded($0, 3) })
    result.add("p99_us", figures.p99Microseconds.map { rounded($0, 3) })
    result.add("max_us", figures.maxMicroseconds.map { rounded($0, 3) })
    result.add("mean_us", figures.meanMicroseconds.map { rounded($0, 3) })
    result.add("median_beats", figures.medianBeats.map { rounded($0, 9) })
    result.add("p99_beats", figures.p99Beats.map { rounded($0, 9) })
    result.add("max_beats", figures.maxBeats.map { rounded($0, 9) })
    result.add(
        "segments",
        figures.segments?.map { segment in
            var entry = Object()
            entry.add("start_ns", segment.start)
            entry.add("end_ns", segment.end)
            entry.add("n", segment.n)
            entry.add("signed_median_us", segment.signedMedianMicroseconds.map { rounded($0, 3) })
            entry.add("p99_us", segment.p99Microseconds.map { rounded($0, 3) })
            entry.add("spread_p99_us", segment.spreadP99Microseconds.map { rounded($0, 3) })
            entry.add("spread_max_us", segment.spreadMaxMicroseconds.map { rounded($0, 3) })
            return entry
        })
    return result
}

func encoded(_ value: some Encodable, pretty: Bool) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
    do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch { fail("cannot encode: \(error)") }
}

// MARK: agreement

func summaryLine(_ label: String, _ figures: PhaseAgreement.Figures) -> String {
    guard figures.n > 0, let median = figures.medianMicroseconds, let p99 = figures.p99Microseconds,
        let max = figures.maxMicroseconds, let signed = figures.signedMedianMicroseconds, let beats = figures.medianBeats,
        let p99Beats = figures.p99Beats, let maxBeats = figures.maxBeats
    else { return "\(label): no common instants" }
    return label
        + String(
            format:
                ": |dphase| median %.1f us, p99 %.1f us, max %.1f us (signed median %+.1f us; median %.2e beats, p99 %.2e, max %.2e; n=%ld)",
            rounded(median, 3), rounded(p99, 3), rounded(max, 3), rounded(signed, 3), rounded(beats, 9),
            rounded(p99Beats, 9), rounded(maxBeats, 9), figures.n)
}

func agreement(_ arguments: [String]) -> Int32 {
    let parsed = Arguments(
        arguments,
        valued: [
            "--quantum", "--step-ms", "--max-gap-ms", "--max-dt-us", "--start-ns", "--end-ns", "--skip-s", "--ref", "--segments-us",
            "--guard-ms", "--json",
        ], flags: ["--settled-only"])
    guard !parsed.positional.isEmpty else { usageError("no FILE") }
    var lines: [PhaseAgreement.Line] = []
    for path in parsed.positional {
        for event in events(path) {
            if let ev = event.ev, ev != "sample" && ev != "state" { continue }
            guard let time = event.t, let tempo = event.tempo, let phase = event.phase ?? event.beat else { continue }
            let sample = LinkTimelineSample(time: Int(time), phase: phase, tempo: tempo, quantum: event.quantum)
            lines.append(PhaseAgreement.Line(file: path, source: event.src, sample: sample, bracket: event.dt))
        }
    }
    let maxBracket = parsed.double("--max-dt-us", 50)
    let streams = PhaseAgreement.streams(lines, maxBracket: maxBracket > 0 ? maxBracket * 1000 : nil)
    var options = PhaseAgreement.Options()
    options.quantum = parsed.double("--quantum")
    options.step = Int(parsed.double("--step-ms", 1) * 1e6)
    options.maxGap = parsed.double("--max-gap-ms", 5) * 1e6
    options.start = parsed.int("--start-ns")
    options.end = parsed.int("--end-ns")
    options.skip = Int(parsed.double("--skip-s", 0) * 1e9)
    options.settledOnly = parsed.flags.contains("--settled-only")
    options.reference = parsed.values["--ref"]
    options.stepThreshold = parsed.double("--segments-us")
    options.guardTime = parsed.double("--guard-ms", 5) * 1e6
    guard options.step > 0 else { usageError("--step-ms must be positive") }
    let result: PhaseAgreement.Result
    do { result = try PhaseAgreement.measure(streams, options: options) } catch { fail("\(error)") }

    var json = Object()
    json.add("quantum", result.quantum)
    json.add("window_ns", [result.windowStart, result.windowEnd])
    json.add("window_s", rounded(Double(max(0, result.windowEnd - result.windowStart)) / 1e9, 3))
    json.add("grid_instants", result.gridInstants)
    json.add("skipped_unsettled", result.skippedUnsettled)
    var streamCounts = Object()
    for stream in result.streams {
        var counts = Object()
        counts.add("samples_in_window", stream.inWindow)
        counts.add("samples_in_input", stream.inInput)
        counts.add("dropped_wide_dt_in_input", stream.droppedWideBracket)
        streamCounts.add(stream.name, counts)
    }
    json.add("streams", streamCounts)
    var pairs = Object()
    var text: [String] = []
    for pair in result.pairs {
        pairs.add("\(pair.first)-\(pair.second)", object(pair.figures))
        text.append(summaryLine("\(pair.first) vs \(pair.second)", pair.figures))
        let segments = pair.figures.segments ?? []
        for (k, segment) in segments.enumerated() where segments.count > 1 {
            let median = segment.signedMedianMicroseconds.map { "\(rounded($0, 3))" } ?? "None"
            let spread = segment.spreadP99Microseconds.map { "\(rounded($0, 3))" } ?? "None"
            let span = String(format: "%.3f", Double(segment.end - segment.start) / 1e9)
            text.append(
                "  segment \(k + 1): \(span) s from \(segment.start), n=\(segment.n), signed median \(median) us, spread p99 \(spread) us")
        }
    }
    json.add("pairs", pairs)
    json.add("all", object(result.all))
    if result.pairs.count > 1 { text.append(summaryLine("all pairs", result.all)) }

    let summary = text.joined(separator: "\n") + "\n"
    if parsed.values["--json"] == "-" {
        print(encoded(json, pretty: false))
        FileHandle.standardError.write(Data(summary.utf8))
    } else {
        if let path = parsed.values["--json"],
            !FileManager.default.createFile(atPath: path, contents: Data((encoded(json, pretty: true) + "\n").utf8))
        {
            fail("cannot write \(path)")
        }
        print(summary, terminator: "")
    }
    return result.all.n > 0 ? 0 : 1
}

// MARK: jumps

func jumps(_ arguments: [String]) -> Int32 {
    let parsed = Arguments(arguments, valued: ["--start-ns", "--end-ns", "--field", "--max-dt-us"], flags: [])
    guard parsed.positional.count == 1 else { usageError("jumps takes one FILE") }
    let field = parsed.values["--field"] ?? "beat"
    let start = parsed.int("--start-ns")
    let end = parsed.int("--end-ns")
    let maxBracket = parsed.double("--max-dt-us", 10) * 1000
    var samples: [LinkTimelineSample] = []
    var dropped = 0
    for event in events(parsed.positional[0], field: field) {
        guard event.ev == "sample" || event.ev == "state", let beat = event.field, let time = event.t.map({ Int($0) }),
            let tempo = event.tempo
        else { continue }
        if let start, time < start { continue }
        if let end, time >= end { continue }
        if maxBracket > 0, let bracket = event.dt, bracket > maxBracket {
            dropped += 1
            continue
        }
        samples.append(LinkTimelineSample(time: time, phase: beat, tempo: tempo))
    }
    let continuity = BeatContinuity(samples)
    var json = Object()
    json.add("n", continuity.n)
    json.add("dropped", dropped)
    json.add("max_abs_jump_us", rounded(abs(continuity.worstJumpMicroseconds), 3))
    json.add("worst_jump_us", rounded(continuity.worstJumpMicroseconds, 3))
    json.add("worst_t", continuity.worstJumpTime)
    json.add("max_gap_ms", rounded(Double(continuity.longestGap) / 1e6, 3))
    json.add("tempos", Set(continuity.tempos.map { rounded($0, 6) }).sorted())
    print(encoded(json, pretty: false))
    return 0
}

// MARK: get

/// A JSON value as read, printed as Python's `json` module would (a number keeps its written kind).
indirect enum JSONValue: Codable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

func get(_ path: String, _ keyPath: String) -> Int32 {
    guard var value = try? JSONDecoder().decode(JSONValue.self, from: contents(path)) else { fail("\(path) is not JSON") }
    for key in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
        switch value {
        case .array(let list) where Int(key).map(list.indices.contains) == true: value = list[Int(key)!]
        case .object(let object) where object[key] != nil: value = object[key]!
        default: return 1
        }
    }
    switch value {
    case .string(let string): print(string)
    case .int(let number): print(number)
    case .double(let number): print(number)
    default:
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return 1 }
        print(String(decoding: data, as: UTF8.self))
    }
    return 0
}

/// `series FILE`: the SeriesSummary of the file's numbers, one a line, as JSON on standard output.
func series(_ path: String) -> Int32 {
    var values: [Double] = []
    for (index, line) in String(decoding: contents(path), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        .enumerated()
    {
        let text = line.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { continue }
        guard let value = Double(text), value.isFinite else { fail("\(path):\(index + 1): not a number: \(text)") }
        values.append(value)
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(SeriesSummary(values)) else { return 1 }
    print(String(decoding: data, as: UTF8.self))
    return 0
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "jumps": exit(jumps(Array(arguments.dropFirst())))
case "series":
    guard arguments.count == 2 else { usageError("series takes FILE") }
    exit(series(arguments[1]))
case "get":
    guard arguments.count == 3 else { usageError("get takes FILE and KEY[.KEY...]") }
    exit(get(arguments[1], arguments[2]))
case nil: usageError("no FILE")
default: exit(agreement(arguments))
}
