/// A stable 64-bit FNV-1a hash.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func add(_ text: String) {
        for byte in text.utf8 + [0] {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
    }
}
