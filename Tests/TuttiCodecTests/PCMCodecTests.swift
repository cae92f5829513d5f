import TuttiCodec
import TuttiCore
import TuttiTesting
import XCTest

/// L16/L24 encoding against a plain reference implementation, and byte-exact round trips.
final class PCMCodecTests: XCTestCase {
    // MARK: Reference implementation (independent of SampleQuantization)

    /// Round half to even, clamp to [-2^(bits-1), 2^(bits-1) - 1], NaN → 0, then big-endian two's complement.
    private func referenceEncode(_ sample: Float, bits: Int) -> [UInt8] {
        let full = Double(1 << (bits - 1))
        var integer: Int64
        if sample.isNaN {
            integer = 0
        } else {
            let scaled = (Double(sample) * full).rounded(.toNearestOrEven)
            integer = Int64(max(-full, min(full - 1, scaled)))
        }
        if integer < 0 { integer += 1 << bits }
        return (0..<(bits / 8)).reversed().map { UInt8((integer >> ($0 * 8)) & 0xFF) }
    }

    private func referenceDecode(_ bytes: ArraySlice<UInt8>) -> Float {
        let bits = bytes.count * 8
        var integer = bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        if integer >= 1 << (bits - 1) { integer -= 1 << bits }
        return Float(Double(integer) / Double(1 << (bits - 1)))
    }

    private func encode(_ samples: [Float], _ format: SampleFormat) -> [UInt8] {
        var payload = [UInt8](repeating: 0xA5, count: samples.count * format.bytesPerSample)
        samples.withUnsafeBufferPointer { source in
            payload.withUnsafeMutableBytes { PCMCodec.encode(source, as: format, into: $0) }
        }
        return payload
    }

    private func decode(_ payload: [UInt8], _ format: SampleFormat) -> [Float] {
        var samples = [Float](repeating: .nan, count: payload.count / format.bytesPerSample)
        payload.withUnsafeBytes { raw in
            samples.withUnsafeMutableBufferPointer { PCMCodec.decode(raw, as: format, into: $0) }
        }
        return samples
    }

    // MARK: Known values

    func testL16KnownByteLayout() {
        XCTAssertEqual(encode([0.5], .l16), [0x40, 0x00])
        XCTAssertEqual(encode([-0.5], .l16), [0xC0, 0x00])
        XCTAssertEqual(encode([0], .l16), [0x00, 0x00])
        XCTAssertEqual(encode([-1], .l16), [0x80, 0x00])
        XCTAssertEqual(encode([1], .l16), [0x7F, 0xFF])
        XCTAssertEqual(encode([1.0 / 32_768], .l16), [0x00, 0x01])
        XCTAssertEqual(encode([-1.0 / 32_768], .l16), [0xFF, 0xFF])
        XCTAssertEqual(encode([0.25, -0.25], .l16), [0x20, 0x00, 0xE0, 0x00])
    }

    func testL24KnownByteLayout() {
        XCTAssertEqual(encode([-1], .l24), [0x80, 0x00, 0x00])
        XCTAssertEqual(encode([1], .l24), [0x7F, 0xFF, 0xFF])
        XCTAssertEqual(encode([0.5], .l24), [0x40, 0x00, 0x00])
        XCTAssertEqual(encode([-0.5], .l24), [0xC0, 0x00, 0x00])
        XCTAssertEqual(encode([1.0 / 8_388_608], .l24), [0x00, 0x00, 0x01])
        XCTAssertEqual(encode([-1.0 / 8_388_608], .l24), [0xFF, 0xFF, 0xFF])
        XCTAssertEqual(encode([Float(0x123456) / 8_388_608], .l24), [0x12, 0x34, 0x56])
    }

    func testKnownBytesDecodeToKnownValues() {
        XCTAssertEqual(decode([0x40, 0x00, 0x80, 0x00, 0x7F, 0xFF, 0xFF, 0xFF], .l16), [0.5, -1, 32_767.0 / 32_768, -1.0 / 32_768])
        XCTAssertEqual(
            decode([0x80, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .l24), [-1, 8_388_607.0 / 8_388_608, -1.0 / 8_388_608])
    }

    func testOutOfRangeAndNaNAreClamped() {
        for format in SampleFormat.allCases where format.isPCM {
            let bits = format.bytesPerSample * 8
            XCTAssertEqual(encode([1.5], format), referenceEncode(1, bits: bits), "\(format)")
            XCTAssertEqual(encode([-1.5], format), referenceEncode(-1, bits: bits), "\(format)")
            XCTAssertEqual(encode([.infinity], format), encode([1], format), "\(format)")
            XCTAssertEqual(encode([-.infinity], format), encode([-1], format), "\(format)")
            XCTAssertEqual(encode([.nan], format), [UInt8](repeating: 0, count: format.bytesPerSample), "\(format)")
            XCTAssertEqual(encode([-.nan], format), [UInt8](repeating: 0, count: format.bytesPerSample), "\(format)")
            XCTAssertEqual(encode([.greatestFiniteMagnitude, -.greatestFiniteMagnitude], format), encode([1, -1], format))
        }
        XCTAssertEqual(encode([1.5], .l16), [0x7F, 0xFF])
        XCTAssertEqual(encode([-1.5], .l16), [0x80, 0x00])
        XCTAssertEqual(encode([1.5], .l24), [0x7F, 0xFF, 0xFF])
        XCTAssertEqual(encode([-1.5], .l24), [0x80, 0x00, 0x00])
    }

    func testRoundingIsToNearestEven() {
        // Halfway between two 16-bit steps.
        XCTAssertEqual(encode([0.5 / 32_768], .l16), [0x00, 0x00])
        XCTAssertEqual(encode([1.5 / 32_768], .l16), [0x00, 0x02])
        XCTAssertEqual(encode([2.5 / 32_768], .l16), [0x00, 0x02])
        XCTAssertEqual(encode([-1.5 / 32_768], .l16), [0xFF, 0xFE])
        XCTAssertEqual(encode([0.7 / 32_768], .l16), [0x00, 0x01])
    }

    // MARK: Round trips

    func testEveryL16ValueRoundTripsByteIdentical() {
        let payload: [UInt8] = (0..<65_536).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let samples = decode(payload, .l16)
        XCTAssertEqual(encode(samples, .l16), payload)
        // And every decoded value is the reference value.
        var mismatches = 0
        for index in 0..<65_536 where samples[index] != referenceDecode(payload[(2 * index)..<(2 * index + 2)]) {
            mismatches += 1
        }
        XCTAssertEqual(mismatches, 0)
    }

    func testSampledL24ValuesRoundTripByteIdentical() {
        var generator = SeededGenerator(seed: 0x24)
        var values: [Int32] = [-8_388_608, -8_388_607, -4_194_304, -2, -1, 0, 1, 2, 4_194_304, 8_388_606, 8_388_607]
        for _ in 0..<100_000 { values.append(Int32.random(in: -8_388_608...8_388_607, using: &generator)) }
        let payload: [UInt8] = values.flatMap { value -> [UInt8] in
            let bits = UInt32(bitPattern: value)
            return [UInt8(bits >> 16 & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits & 0xFF)]
        }
        let samples = decode(payload, .l24)
        XCTAssertEqual(encode(samples, .l24), payload)
        var mismatches = 0
        for (index, value) in values.enumerated() where samples[index] != Float(value) / 8_388_608 {
            mismatches += 1
        }
        XCTAssertEqual(mismatches, 0)
    }

    func testEncodingMatchesReferenceForSeededFloats() {
        var generator = SeededGenerator(seed: 0xF10A7)
        var samples: [Float] = [0, -0.0, 1, -1, 0.5, -0.5, 1.0000001, -1.0000001, .leastNonzeroMagnitude, -.leastNonzeroMagnitude]
        for _ in 0..<50_000 { samples.append(Float.random(in: -1.2...1.2, using: &generator)) }
        for format in SampleFormat.allCases where format.isPCM {
            let bits = format.bytesPerSample * 8
            let expected = samples.flatMap { referenceEncode($0, bits: bits) }
            let actual = encode(samples, format)
            var mismatches = 0
            for index in samples.indices {
                let range = (index * format.bytesPerSample)..<((index + 1) * format.bytesPerSample)
                if actual[range] != expected[range] {
                    mismatches += 1
                    if mismatches <= 3 { XCTFail("\(format) \(samples[index]): \(actual[range]) vs reference \(expected[range])") }
                }
            }
            XCTAssertEqual(mismatches, 0, "\(format)")
            // Decoding what was encoded and encoding again is stable.
            XCTAssertEqual(encode(decode(actual, format), format), actual, "\(format)")
        }
    }

    /// Every length from 0 to 20 (the kernels take four or eight samples at a time, with a tail one by one, and
    /// L24 stores four bytes a sample but the last): the bytes match the reference, not one byte past the
    /// payload is touched, and decoding reads only the payload. Special values in every position.
    func testEveryLengthEncodesExactlyItsBytesAndDecodesBack() {
        let specials: [Float] = [.nan, .infinity, -.infinity, 1, -1, 0.99999994, -0.5, 1.5 / 8_388_608, 2.5 / 32_768, -0.0]
        for format in SampleFormat.allCases where format.isPCM {
            let width = format.bytesPerSample
            for count in 0...20 {
                let samples = (0..<count).map { specials[($0 * 7 + count) % specials.count] }
                var buffer = [UInt8](repeating: 0xEE, count: count * width + 4)
                samples.withUnsafeBufferPointer { source in
                    buffer.withUnsafeMutableBytes { raw in
                        PCMCodec.encode(source, as: format, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<(count * width)]))
                    }
                }
                XCTAssertEqual(
                    Array(buffer[(count * width)...]), [0xEE, 0xEE, 0xEE, 0xEE], "\(format), \(count): nothing past the payload")
                let expected = samples.flatMap { referenceEncode($0, bits: width * 8) }
                XCTAssertEqual(Array(buffer[..<(count * width)]), expected, "\(format), \(count)")
                var decoded = [Float](repeating: .nan, count: count)
                buffer.withUnsafeBytes { raw in
                    decoded.withUnsafeMutableBufferPointer {
                        PCMCodec.decode(UnsafeRawBufferPointer(rebasing: raw[0..<(count * width)]), as: format, into: $0)
                    }
                }
                let reference = (0..<count).map { referenceDecode(expected[($0 * width)..<(($0 + 1) * width)]) }
                XCTAssertEqual(decoded, reference, "\(format), \(count)")
            }
        }
    }

    func testInterleavedBufferIsEncodedInOrderAndOnlyTheSamplesGiven() {
        var payload = [UInt8](repeating: 0xEE, count: 8)
        let samples: [Float] = [0.5, -1, 0]
        samples.withUnsafeBufferPointer { source in
            payload.withUnsafeMutableBytes { PCMCodec.encode(source, as: .l16, into: $0) }
        }
        XCTAssertEqual(payload, [0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0xEE, 0xEE])
    }
}
