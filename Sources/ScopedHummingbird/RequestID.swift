/// Request IDs: an incoming one is kept when valid, otherwise a new one is made.
public enum RequestID {
    /// Whether `id` is a valid request ID: 1 to 64 characters from `A-Z a-z 0-9 . _ -`.
    public static func isValid(_ id: String) -> Bool {
        guard (1...64).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// `incoming` if it is a valid request ID, otherwise a new random one.
    public static func accepting(_ incoming: String?) -> String {
        if let incoming, isValid(incoming) { return incoming }
        return make()
    }

    /// A new random request ID: 32 hexadecimal digits.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = (generator.next() as UInt64, generator.next() as UInt64)
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<32 {
                let word = index < 16 ? words.0 : words.1
                let nibble = Int((word >> UInt64((15 - index % 16) * 4)) & 0xF)
                buffer[index] = digits.utf8Start[nibble]
            }
            return 32
        }
    }
}
