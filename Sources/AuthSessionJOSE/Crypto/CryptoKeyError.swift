/// Why a key was refused: a size, an exponent or a point this package will not verify with.
///
/// ``description`` is a short reason ("modulus shorter than 2048 bits", "point not on the
/// curve"); it never holds key material.
///
/// All operations are thread-safe.
package struct CryptoKeyError: Error, Sendable, Hashable, CustomStringConvertible {

    /// The reason, a short phrase without key material.
    package let reason: String

    /// An error with the given reason.
    ///
    /// - Parameter reason: A short phrase; never key material.
    package init(_ reason: String) {
        self.reason = reason
    }

    /// The reason.
    package var description: String { reason }
}
