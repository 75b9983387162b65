// swift-tools-version: 6.1
// libFuzzer targets, kept out of the main package so a plain `swift build` never links a
// fuzzer: `scripts/fuzz` builds them (with AddressSanitizer, the library instrumented too).
import PackageDescription

let package = Package(
    name: "LocationKeepAliveFuzz",
    dependencies: [.package(path: "LocationKeepAlive")],  // a symlink to the root: a stable package name
    targets: [
        .executableTarget(
            name: "FuzzNMEA",
            dependencies: [.product(name: "KeepAliveCore", package: "LocationKeepAlive")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzHostProtocol",
            dependencies: [.product(name: "KeepAliveHost", package: "LocationKeepAlive")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "FuzzGPSD",
            dependencies: [.product(name: "KeepAliveCore", package: "LocationKeepAlive")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
