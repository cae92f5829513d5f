#if canImport(Glibc)
import Glibc
#endif
import TuttiIO
import XCTest

/// The state directory is made where the user said: an absolute path from the root, a relative one (as
/// `--state-dir state` gives) in the working directory, never at the root instead.
final class StateFilesTests: XCTestCase {
    private var base = ""

    override func setUp() {
        base = "/tmp/tutti-state-files-tests-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        XCTAssertEqual(mkdir(base, 0o755), 0)
    }

    override func tearDown() {
        _ = try? FileManager.default.removeItem(atPath: base)
    }

    private func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    func testAnAbsolutePathIsMadeWithEveryParent() throws {
        try StateFiles.makeDirectories("\(base)/a/b//c/")
        XCTAssertTrue(isDirectory("\(base)/a/b/c"))
    }

    func testARelativePathIsMadeInTheWorkingDirectory() throws {
        let previous = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(base))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        let name = "relative-\(getpid())"
        try StateFiles.makeDirectories("\(name)/peers")
        XCTAssertTrue(isDirectory("\(base)/\(name)/peers"), "made in the working directory")
        XCTAssertFalse(isDirectory("/\(name)"), "not at the root")
        try StateFiles.writeLine("x", to: "\(name)/peers/id")
        XCTAssertEqual(StateFiles.readLine("\(name)/peers/id"), "x")
    }
}
