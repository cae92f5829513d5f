import XCTest

@testable import TuttiProcess

/// `NAME[,PARAM=VALUE…]` as the user writes it: defaults, every refusal in one line, and the text read back.
final class ProcessorSpecificationTests: XCTestCase {
    func testDefaultsAndGivenValues() throws {
        let eq = try ProcessorSpecification(parsing: "eq,freq=250, db = -3")
        XCTAssertEqual(eq.name, "eq")
        XCTAssertEqual(eq.values, [250, -3, 0.707])
        XCTAssertEqual(eq.description, "eq,freq=250,db=-3,q=0.707")
        XCTAssertEqual(try ProcessorSpecification(parsing: eq.description), eq)
        XCTAssertEqual(try ProcessorSpecification(parsing: "LIMITER").description, "limiter,ceiling=-1,release=50")
    }

    func testEveryRefusalIsOneLineThatSaysWhatWouldDo() {
        let cases: [(String, String)] = [
            ("reverb", "unknown processor 'reverb': the built-in ones are gain, delay, eq, limiter"),
            ("gain,volume=3", "gain has no parameter 'volume': it takes db"),
            ("gain,db", "'db' is not PARAMETER=VALUE (gain takes db)"),
            ("gain,db=loud", "gain db must be a number (got 'loud')"),
            ("gain,db=nan", "gain db must be a number (got 'nan')"),
            ("gain,db=30", "gain db must be between -96 and 24 dB (got 30)"),
            ("eq,q=0", "eq q must be between 0.1 and 18 (got 0)"),
            ("delay,ms=2001", "delay ms must be between 0 and 2000 ms (got 2001)"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try ProcessorSpecification(parsing: text), text) { error in
                XCTAssertEqual((error as? ProcessorError)?.message, message, text)
                XCTAssertFalse(message.contains("\n"))
            }
        }
    }

    func testSetChangesOneValueAndReturnsItsIndex() throws {
        var limiter = try ProcessorSpecification(parsing: "limiter")
        XCTAssertEqual(try limiter.set("release", to: "200"), 1)
        XCTAssertEqual(limiter.values, [-1, 200])
        XCTAssertThrowsError(try limiter.set("release", to: "0"))
        XCTAssertEqual(limiter.values, [-1, 200], "a refused value changes nothing")
    }

    func testEveryProcessorListsItsParametersWithTheirDefaultsInRange() {
        for name in BuiltInProcessor.names {
            let parameters = BuiltInProcessor.parameters(of: name) ?? []
            XCTAssertFalse(parameters.isEmpty, name)
            for parameter in parameters { XCTAssertTrue(parameter.range.contains(parameter.defaultValue), "\(name) \(parameter.name)") }
        }
        XCTAssertNil(BuiltInProcessor.parameters(of: "reverb"))
        XCTAssertEqual(
            GainProcessor.parameters.first?.description, "db (gain, -96…24 dB, default 0)")
    }
}
