// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "LocationKeepAlive",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LocationKeepAlive", targets: ["LocationKeepAlive"]),
        .library(name: "LocationKeepAliveMocks", targets: ["LocationKeepAliveMocks"]),
        .executable(name: "keepalive", targets: ["keepalive"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .target(
            name: "LocationKeepAlive",
            dependencies: [
                "CGPS",
                "CALSA",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "LocationKeepAliveMocks",
            dependencies: [
                "LocationKeepAlive",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            path: "Mocks",
            exclude: ["Fixtures/README.md"],
            resources: [.copy("Fixtures/nmea")]
        ),
        .executableTarget(
            name: "keepalive",
            dependencies: [
                "LocationKeepAlive",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "keepalive-bench",
            dependencies: ["LocationKeepAlive"],
            path: "Benchmarks/keepalive-bench"
        ),
        .testTarget(
            name: "LocationKeepAliveTests",
            dependencies: [
                "LocationKeepAlive",
                "LocationKeepAliveMocks",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            exclude: ["FuzzRegressions"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "keepalive",
                "LocationKeepAlive",
                "LocationKeepAliveMocks",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}
