import AuthSessionJOSE
import Testing

/// SHA-256 against FIPS 180-4's examples (NIST's "Example Algorithms"), and the padding
/// boundaries (digests from Python's hashlib).
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct SHA256Tests {

    @Test(
        "FIPS 180-4 examples",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ]
    )
    func fipsExamples(message: String, digest: String) {
        #expect(CryptoFixtures.hexadecimal(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test("one million 'a' (FIPS 180-4)")
    func oneMillionA() {
        #expect(
            CryptoFixtures.hexadecimal(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    /// 55 bytes is the longest message padded within one block; 56 to 63 need a second block of
    /// padding; 64, 119 and 120 move the same boundaries one block on.
    @Test(
        "padding boundaries",
        arguments: [
            (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
            (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
            (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
        ]
    )
    func paddingBoundaries(length: Int, digest: String) {
        #expect(CryptoFixtures.hexadecimal(SHA256.hash([UInt8](repeating: 0x61, count: length))) == digest)
    }

    @Test("a sequence without contiguous storage hashes as its bytes do")
    func nonContiguousSequence() {
        let bytes = (0..<1000).lazy.map { UInt8(truncatingIfNeeded: $0) }
        let expected = "a8af099bf2e878609558dbf69d8f88f4a31040a8cf84b549a0cfa912f12ffc3f"
        #expect(CryptoFixtures.hexadecimal(SHA256.hash(bytes)) == expected)
        #expect(CryptoFixtures.hexadecimal(SHA256.hash(Array(bytes)[...])) == expected)
    }
}
