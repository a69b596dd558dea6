// swift-tools-version:6.0

import PackageDescription

let package = Package(
    name: "AuthSessionKit",
    platforms: [
        .iOS(.v14),
        .macOS(.v10_15),
        .macCatalyst(.v14),
    ],
    products: [
        .library(name: "AuthSessionInterface", targets: ["AuthSessionInterface"]),
        .library(name: "AuthSession", targets: ["AuthSession"]),
        .library(name: "AuthSessionMocks", targets: ["AuthSessionMocks"]),
        .library(name: "AuthSessionJOSE", targets: ["AuthSessionJOSE"]),
        .library(name: "AuthSessionProviders", targets: ["AuthSessionProviders"]),
        .library(name: "AuthSessionOAuth2", targets: ["AuthSessionOAuth2"]),
        .executable(name: "auth-session-demo", targets: ["AuthSessionDemo"]),
        .executable(name: "auth-session-bench", targets: ["AuthSessionBenchmarks"]),
    ],
    targets: [
        // MARK: Redaction (below every module: the registry of secrets every description is cleaned with)

        .target(
            name: "AuthSessionRedaction"
        ),

        // MARK: Contract

        .target(
            name: "AuthSessionInterface",
            dependencies: ["AuthSessionRedaction"]
        ),
        .testTarget(
            name: "AuthSessionInterfaceTests",
            dependencies: ["AuthSessionInterface"]
        ),

        // MARK: Engine

        .target(
            name: "AuthSession",
            dependencies: ["AuthSessionInterface"]
        ),
        .testTarget(
            name: "AuthSessionTests",
            dependencies: ["AuthSession", "AuthSessionInterface", "AuthSessionMocks"]
        ),

        // MARK: JOSE (JSON, SHA-256, RSA and P-256 verification, JWS, JWK, JWK sets)

        .target(
            name: "AuthSessionJOSE",
            dependencies: ["AuthSessionRedaction"]
        ),
        .testTarget(
            name: "AuthSessionJOSETests",
            dependencies: ["AuthSessionJOSE", "AuthSessionRedaction", "AuthSessionMocks"],
            resources: [.copy("Fixtures")]
        ),

        // MARK: Session manager

        .target(
            name: "AuthSessionProviders",
            dependencies: ["AuthSession", "AuthSessionInterface", "AuthSessionJOSE"]
        ),
        .testTarget(
            name: "AuthSessionProvidersTests",
            dependencies: [
                "AuthSessionProviders", "AuthSessionMocks", "AuthSession", "AuthSessionInterface", "SessionStoreWorker",
            ],
            resources: [.copy("Fixtures")]
        ),
        // A process for the store's crash and cross-process tests: they start it, and kill it.
        .executableTarget(
            name: "SessionStoreWorker",
            dependencies: ["AuthSessionProviders", "AuthSession"],
            path: "Tests/SessionStoreWorker"
        ),

        // MARK: OAuth 2.0 / OpenID Connect client

        .target(
            name: "AuthSessionOAuth2",
            dependencies: ["AuthSessionProviders", "AuthSession"]
        ),
        .testTarget(
            name: "AuthSessionOAuth2Tests",
            dependencies: ["AuthSessionOAuth2", "AuthSessionProviders", "AuthSessionMocks", "AuthSession"]
        ),
        // Against a real authorization server (`scripts/oauth-test-server`); skipped without one.
        .testTarget(
            name: "AuthSessionOAuth2IntegrationTests",
            dependencies: [
                "AuthSessionOAuth2", "AuthSessionProviders", "AuthSessionMocks", "AuthSession", "SessionManagerWorker",
            ]
        ),
        // A process for the manager's cross-process and kill-mid-refresh tests against the real server.
        .executableTarget(
            name: "SessionManagerWorker",
            dependencies: ["AuthSessionProviders", "AuthSessionOAuth2", "AuthSession", "AuthSessionMocks"],
            path: "Tests/SessionManagerWorker"
        ),

        // MARK: Test kit

        .target(
            name: "AuthSessionMocks",
            dependencies: ["AuthSession", "AuthSessionInterface", "AuthSessionProviders", "AuthSessionOAuth2"]
        ),
        .testTarget(
            name: "AuthSessionMocksTests",
            dependencies: ["AuthSessionMocks", "AuthSession", "AuthSessionInterface", "AuthSessionProviders"]
        ),

        // MARK: Executables

        .executableTarget(
            name: "AuthSessionDemo",
            dependencies: [
                "AuthSession", "AuthSessionInterface", "AuthSessionMocks", "AuthSessionProviders", "AuthSessionOAuth2",
            ]
        ),
        .executableTarget(
            name: "AuthSessionBenchmarks",
            dependencies: [
                "AuthSession", "AuthSessionInterface", "AuthSessionProviders", "AuthSessionOAuth2", "AuthSessionMocks",
            ]
        ),

        // MARK: Examples (compiled with the package, not offered to its users: no product)

        // A command-line sign-in with the device flow; `.ci/run` runs it against the real server.
        .executableTarget(
            name: "DeviceFlowCLI",
            dependencies: ["AuthSession", "AuthSessionOAuth2", "AuthSessionProviders"],
            path: "Examples/DeviceFlowCLI"
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .plugin {
    var settings = target.swiftSettings ?? []
    // Spell out `any` for every existential (SE-0335), as the Swift 7 language mode will require.
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
