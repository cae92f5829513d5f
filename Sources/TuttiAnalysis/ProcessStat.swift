/// What the benchmark reads from a `/proc/PID/stat` line: the process's CPU time, utime + stime, in clock ticks
/// (`sysconf(_SC_CLK_TCK)` a second), over all its threads, the ones that ended included.
///
/// The fields are counted from 1 as proc(5) numbers them: 1 pid, 2 comm (in parentheses; it may hold spaces and
/// parentheses itself, so the fields after it are found from the line's last `)`), 3 state, …, 14 utime,
/// 15 stime, 16 cutime, 17 cstime. The children's times (16, 17) are not the process's own.
///
/// Thread-safe: a pure function, any thread.
public enum ProcessStat {
    /// utime + stime of `line`, or nil when it is not a stat line.
    public static func cpuTicks(statLine line: String) -> Int? {
        guard let close = line.lastIndex(of: ")") else { return nil }
        // After the comm: field 3 (state) is index 0, so field n is index n − 3.
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[14 - 3]), let system = Int(fields[15 - 3]) else { return nil }
        return user + system
    }
}
