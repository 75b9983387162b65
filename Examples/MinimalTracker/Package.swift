// swift-tools-version: 6.1
import PackageDescription

// A tracker that uses only LocationManager: it imports KeepAliveCore, so it builds and links
// without GRDB, SQLite, Foundation (beyond FoundationEssentials), ALSA, libcurl or libmosquitto.
// `scripts/test` builds it and checks its binary with ldd and nm (scripts/check-example).
let package = Package(
    name: "MinimalTracker",
    dependencies: [.package(name: "LocationKeepAlive", path: "../..")],
    targets: [
        .executableTarget(
            name: "MinimalTracker",
            dependencies: [.product(name: "KeepAliveCore", package: "LocationKeepAlive")]
        )
    ],
    swiftLanguageModes: [.v6]
)
