// swift-tools-version: 6.1
import PackageDescription

// A tracker that uses only LocationManager: it imports KeepAliveCore, so it builds and links
// without GRDB, SQLite, Foundation (beyond FoundationEssentials), ALSA, libcurl or libmosquitto.
// Its fixes reach a `@MainActor` delegate, adopted as an iOS app adopts CLLocationManagerDelegate.
// `scripts/test` builds it, checks its binary with ldd and nm, and runs its tests
// (scripts/check-example).
let package = Package(
    name: "MinimalTracker",
    dependencies: [.package(name: "LocationKeepAlive", path: "../..")],
    targets: [
        .target(
            name: "Tracker",
            dependencies: [.product(name: "KeepAliveCore", package: "LocationKeepAlive")]
        ),
        .executableTarget(
            name: "MinimalTracker",
            dependencies: ["Tracker", .product(name: "KeepAliveCore", package: "LocationKeepAlive")]
        ),
        .testTarget(
            name: "TrackerTests",
            dependencies: ["Tracker", .product(name: "KeepAliveCore", package: "LocationKeepAlive")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
