import XCTest

@testable import TuttiDiscovery

final class ServiceNamesTests: XCTestCase {
    func testShortNameIsUnchanged() {
        XCTAssertEqual(ServiceNames.sanitize("Studio A"), "Studio A")
    }

    func testEmptyNameGetsFallback() {
        XCTAssertEqual(ServiceNames.sanitize(""), ServiceNames.fallbackName)
        XCTAssertEqual(ServiceNames.sanitize("\0"), ServiceNames.fallbackName)
    }

    func testLongNameIsCutAtCharacterBoundary() {
        let name = String(repeating: "ä", count: 40)  // 80 UTF-8 bytes
        let sanitized = ServiceNames.sanitize(name)
        XCTAssertEqual(sanitized, String(repeating: "ä", count: 31))
        XCTAssertLessThanOrEqual(sanitized.utf8.count, ServiceNames.maximumLength)
    }
}
