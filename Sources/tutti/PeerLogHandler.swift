#if canImport(Glibc)
import Glibc
#endif
import Logging
import TuttiIO

/// The peer's log lines on standard error, stamped to the millisecond in UTC
/// (`2026-11-21T18:20:36.123Z info tutti.peer: …`), so that a stage or lab log can be lined up with
/// the logs of the other hosts and with packet captures. Control plane only: never used on the audio
/// or packet threads. Any thread may log through it (each line is one `write` to standard error).
struct PeerLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line = "\(Self.timestamp()) \(event.level) \(label):\(fields) [\(event.source)] \(event.message)\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = system_write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Wall-clock time as ISO 8601 with milliseconds, UTC.
    static func timestamp() -> String {
        var now = timespec()
        system_clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let base = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        return base + "." + String(milliseconds + 1000).dropFirst() + "Z"
    }
}
