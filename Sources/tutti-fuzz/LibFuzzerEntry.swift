#if FUZZING
#if canImport(Glibc)
import Glibc
#endif
import TuttiIO

/// The program's entry point in the fuzzing build. SwiftPM links an executable with `main` defined as
/// `tutti_fuzz_main` (its own entry point's name), so libFuzzer's `main` is not the one that runs: this hands
/// over to libFuzzer's driver, as its `main` would.
@_cdecl("tutti_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    typealias Driver =
        @convention(c) (
            UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>, Callback
        ) -> CInt
    guard let symbol = dlsym(nil, "LLVMFuzzerRunDriver") else { fatalError("tutti-fuzz: libFuzzer's driver is not linked in") }
    var count = argc
    var vector = argv
    return unsafeBitCast(symbol, to: Driver.self)(&count, &vector) { data, size in fuzzerTestOneInput(data, size) }
}

/// The target this libFuzzer binary runs, chosen once by `TUTTI_FUZZ_TARGET` (see `FuzzTarget`).
nonisolated(unsafe) private var selected: FuzzTarget?

/// libFuzzer calls this once before the first input.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    let name = StateFiles.environment("TUTTI_FUZZ_TARGET") ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError(
            "tutti-fuzz: set TUTTI_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")) (got '\(name)')")
    }
    selected = target
    return 0
}

/// libFuzzer calls this with every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected?.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#endif
