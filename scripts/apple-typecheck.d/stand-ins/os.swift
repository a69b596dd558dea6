// A stand-in for Apple's `os` module (the unified logging system's Swift API), so that the
// package's `#if canImport(os)` branch is type-checked on Linux (scripts/apple-typecheck).
// Only what the package uses, declared as Apple's documentation shows it:
// https://developer.apple.com/documentation/os/logger
//
// As strict as Apple's overlay where the compiler checks it: the log methods and
// `OSLogInterpolation.appendInterpolation` carry `@_semantics("oslog.requires_constant_arguments")`,
// and `OSLogPrivacy`'s and `OSLogStringAlignment`'s static members
// `@_semantics("constant_evaluable")`, as in the Swift project's copy of the overlay
// (stdlib/private/OSLog: OSLogStringTypes.swift, OSLogPrivacy.swift, OSLogStringAlignment.swift).
// The type checker's constantness check (lib/Sema/ConstantnessSemaDiagnostics.cpp) then requires,
// on Linux as on Apple platforms, a string interpolation for the message and a static member for
// the privacy and the alignment: "argument must be a static method or property of 'OSLogPrivacy'".

// https://developer.apple.com/documentation/os/logger: `struct Logger`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct Logger {
    // https://developer.apple.com/documentation/os/logger/init(subsystem:category:):
    // `init(subsystem: String, category: String)`
    public init(subsystem: String, category: String) {}

    // https://developer.apple.com/documentation/os/logger/debug(_:): `func debug(_ message: OSLogMessage)`
    @_semantics("oslog.requires_constant_arguments")
    public func debug(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/info(_:): `func info(_ message: OSLogMessage)`
    @_semantics("oslog.requires_constant_arguments")
    public func info(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/warning(_:): `func warning(_ message: OSLogMessage)`
    @_semantics("oslog.requires_constant_arguments")
    public func warning(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/error(_:): `func error(_ message: OSLogMessage)`
    @_semantics("oslog.requires_constant_arguments")
    public func error(_ message: OSLogMessage) {}
}

// https://developer.apple.com/documentation/os/oslogmessage: `struct OSLogMessage`, made from an
// interpolated string literal (`ExpressibleByStringInterpolation`).
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    // Apple's initializers also carry `@_semantics("oslog.message.init_interpolation")` (and
    // `init_stringliteral`), which make the compiler's OSLogOptimization pass fold the message
    // into a format string: it needs the overlay's inlinable bodies, so the stand-in leaves them out.
    public init(stringInterpolation: OSLogInterpolation) {}
    public init(stringLiteral value: String) {}
}

// https://developer.apple.com/documentation/os/osloginterpolation: `@frozen struct OSLogInterpolation`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
@frozen
public struct OSLogInterpolation: StringInterpolationProtocol {
    public init(literalCapacity: Int, interpolationCount: Int) {}
    public mutating func appendLiteral(_ literal: String) {}

    // https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-6tazr:
    // `mutating func appendInterpolation(_ argumentString: @autoclosure @escaping () -> String,
    // align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto)`
    @_semantics("constant_evaluable")
    @_semantics("oslog.requires_constant_arguments")
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String,
        align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {}
}

// https://developer.apple.com/documentation/os/oslogstringalignment: `struct OSLogStringAlignment`,
// with `static var none: OSLogStringAlignment`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogStringAlignment {
    @_semantics("constant_evaluable")
    public static var none: OSLogStringAlignment { OSLogStringAlignment() }
}

// https://developer.apple.com/documentation/os/oslogprivacy: `struct OSLogPrivacy`, with
// `static var auto`, `static var public` and `static var private`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogPrivacy {
    @_semantics("constant_evaluable")
    public static var auto: OSLogPrivacy { OSLogPrivacy() }
    @_semantics("constant_evaluable")
    public static var `public`: OSLogPrivacy { OSLogPrivacy() }
    @_semantics("constant_evaluable")
    public static var `private`: OSLogPrivacy { OSLogPrivacy() }
}
