// A stand-in for Apple's `os` module (the unified logging system's Swift API), so that the
// package's `#if canImport(os)` branch is type-checked on Linux (scripts/apple-typecheck).
// Only what the package uses, declared as Apple's documentation shows it:
// https://developer.apple.com/documentation/os/logger

// https://developer.apple.com/documentation/os/logger: `struct Logger`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct Logger {
    // https://developer.apple.com/documentation/os/logger/init(subsystem:category:):
    // `init(subsystem: String, category: String)`
    public init(subsystem: String, category: String) {}

    // https://developer.apple.com/documentation/os/logger/debug(_:): `func debug(_ message: OSLogMessage)`
    public func debug(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/info(_:): `func info(_ message: OSLogMessage)`
    public func info(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/warning(_:): `func warning(_ message: OSLogMessage)`
    public func warning(_ message: OSLogMessage) {}

    // https://developer.apple.com/documentation/os/logger/error(_:): `func error(_ message: OSLogMessage)`
    public func error(_ message: OSLogMessage) {}
}

// https://developer.apple.com/documentation/os/oslogmessage: `struct OSLogMessage`, made from an
// interpolated string literal (`ExpressibleByStringInterpolation`).
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
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
    public static var none: OSLogStringAlignment { OSLogStringAlignment() }
}

// https://developer.apple.com/documentation/os/oslogprivacy: `struct OSLogPrivacy`, with
// `static var auto`, `static var public` and `static var private`.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogPrivacy {
    public static var auto: OSLogPrivacy { OSLogPrivacy() }
    public static var `public`: OSLogPrivacy { OSLogPrivacy() }
    public static var `private`: OSLogPrivacy { OSLogPrivacy() }
}
