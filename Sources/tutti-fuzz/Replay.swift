#if !FUZZING
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TuttiIO

/// Without libFuzzer (an ordinary build): `tutti-fuzz seeds DIR` writes each target's seed corpus (valid
/// messages from the project's own encoders, and the Link captures' golden frames) under DIR/TARGET/, and
/// `tutti-fuzz replay TARGET FILE…` runs files through a target, to reproduce what the fuzzer found or to
/// check a corpus without the sanitizers. Exit status: 0, or 64 for a usage error (a crash is a crash).
@main
struct FuzzCommand {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch (arguments.first, arguments.count) {
        case ("seeds", 2):
            do {
                let count = try FuzzSeeds.write(under: arguments[1])
                print("tutti-fuzz: \(count) seeds under \(arguments[1])")
            } catch {
                fail("cannot write the seeds: \(error)", status: 1)
            }
        case ("replay", 3...):
            guard let target = FuzzTarget(rawValue: arguments[1]) else { usage() }
            var count = 0
            for path in arguments.dropFirst(2) {
                guard let bytes = try? TextFile.readBytes(path) else {
                    fail("cannot read \(path)", status: 1)
                }
                bytes.withUnsafeBytes { target.run($0) }
                count += 1
            }
            print("tutti-fuzz: \(count) inputs through \(target.rawValue), no crash")
        default:
            usage()
        }
    }

    static func usage() -> Never {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
        fail("usage: tutti-fuzz seeds DIR | tutti-fuzz replay \(names) FILE...", status: 64)
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("tutti-fuzz: \(message)\n".utf8))
        exit(status)
    }
}
#endif
