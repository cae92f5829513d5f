/// Bytes from a hex string, as test vectors and captures are written; spaces and newlines are ignored.
/// Traps on an odd number of digits (a broken fixture). Thread-safe: yes (pure).
public func hexBytes(_ text: String) -> [UInt8] {
    let digits = text.filter { $0.isHexDigit }
    precondition(digits.count % 2 == 0, "odd hex string")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
