import XCTest

@testable import TuttiDiscovery

/// Lifecycle checks that need no avahi-daemon and send nothing on the network: nothing is
/// published or browsed, so at most a D-Bus connection is attempted.
final class ServiceDiscoveryLifecycleTests: XCTestCase {
    func testInvalidServiceTypeThrows() {
        XCTAssertThrowsError(try ServiceDiscovery(serviceType: "tutti") { _ in }) { error in
            let description = String(describing: error)
            XCTAssertTrue(description.contains("invalid DNS-SD service type"), description)
            XCTAssertFalse(description.contains("\n"))
        }
    }

    func testStopIsIdempotentAndSilencesEvents() throws {
        let discovery = try ServiceDiscovery { _ in }
        discovery.stop()
        discovery.stop()
        XCTAssertNil(discovery.currentName)
        // Calls after stop are ignored rather than touching freed Avahi objects.
        discovery.startBrowsing()
        XCTAssertNil(discovery.currentName)
    }

    func testDeinitWithoutStop() throws {
        var discovery: ServiceDiscovery? = try ServiceDiscovery { _ in }
        XCTAssertNotNil(discovery)
        discovery = nil
    }

    func testErrorDescriptionIsOneLine() {
        XCTAssertEqual(String(describing: DiscoveryError("boom")), "service discovery: boom")
    }
}
