/// Hexadecimal text for bytes: lowercase out, either case in. Thread-safe: yes (stateless).
public enum Hex {
    /// The value of one hex digit (`0-9`, `a-f`, `A-F`), or nil.
    public static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x41...0x46: digit - 0x41 + 10
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }

    /// `bytes` as lowercase hex, two digits a byte.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }

    /// The bytes `text` spells, two digits a byte; nil for an odd count or a character that is not a digit.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(ofDigit: digits[index]), let low = value(ofDigit: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
