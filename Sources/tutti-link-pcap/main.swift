// tutti-link-pcap: the Link lab tests' reader of their tcpdump captures (scripts/link/tutti-link-test,
// scenario 3). Lab-only, so not a `tutti` subcommand.
//
//   tutti-link-pcap dump FILE                     one line per Link discovery message
//   tutti-link-pcap sessions FILE [--json FILE|-] which session survived (LinkSessionSummary), as JSON
//
// Exit status: 0, or 1 with one line on standard error for an unreadable or malformed capture, 2 for a
// usage error.

import Foundation
import TuttiLinkCapture

#if canImport(Glibc)
import Glibc
#endif

let usage = "usage: tutti-link-pcap dump FILE | tutti-link-pcap sessions FILE [--json FILE|-]"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("tutti-link-pcap: \(message)\n".utf8))
    exit(status)
}

func messages(_ path: String) -> [LinkSessionSummary.Message] {
    do {
        return LinkSessionSummary.messages(in: try PacketCapture.datagrams(inFile: path))
    } catch {
        fail("cannot read \(path): \(error)", status: 1)
    }
}

func fixed(_ value: Double?, _ digits: Int = 6) -> String {
    value.map { String(format: "%.\(digits)f", $0) } ?? "-"
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch (arguments.first, arguments.count) {
case ("dump", 2):
    let all = messages(arguments[1])
    let start = all.first?.timestampNanoseconds ?? 0
    for entry in all {
        let state = entry.message.state
        let line = [
            fixed(Double(entry.timestampNanoseconds - start) / 1e9), entry.source,
            LinkSessionSummary.name(entry.message.kind), "node", LinkSessionSummary.hex(entry.message.sender.bytes),
            "sess", state.map { LinkSessionSummary.hex($0.sessionID.bytes) } ?? "-",
            "tempo", fixed(state?.timeline.tempo.bpm, 3), "playing", state?.startStop.map { "\($0.isPlaying)" } ?? "-",
        ]
        print(line.joined(separator: " "))
    }
case ("sessions", let count) where count == 2 || (count == 4 && arguments[2] == "--json"):
    let summary = LinkSessionSummary(messages: messages(arguments[1]))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let json: Data
    do { json = try encoder.encode(summary) } catch { fail("cannot encode the summary: \(error)", status: 1) }
    let destination = arguments.count == 4 ? arguments[3] : nil
    if destination == "-" {
        print(String(decoding: json, as: UTF8.self))
    } else {
        if let destination, !FileManager.default.createFile(atPath: destination, contents: json) {
            fail("cannot write \(destination)", status: 1)
        }
        print(
            "final sessions \(summary.finalSessions); founded \(summary.foundedSessions); smallest "
                + "\(summary.smallestFounded ?? "-"); founder gap \(fixed(summary.founderGapS)) s")
    }
default:
    fail(usage, status: 2)
}
