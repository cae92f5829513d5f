import TuttiResample
import XCTest

final class SoxrLibraryTests: XCTestCase {
    func testTheLinkedLibraryReportsItsVersion() {
        XCTAssertTrue(SoxrLibrary.version.hasPrefix("libsoxr-"), SoxrLibrary.version)
    }
}
