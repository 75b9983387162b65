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
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `swift package generate-documentation` (scripts/docs): build-time only, nothing linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
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
        // Headers only: both libraries are loaded with dlopen on first use (see their shims).
        .systemLibrary(
            name: "CMosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // sd_notify's datagram protocol to $NOTIFY_SOCKET, in a few lines of C: no libsystemd.
        .systemLibrary(name: "CSystemdNotify"),
        // The listening socket of `keepalive run --metrics`.
        .systemLibrary(name: "CSockets"),
        // The host's process control: accept4, posix_spawn's closefrom, opening a file as a user.
        .systemLibrary(name: "CProcessControl"),
        .target(
            name: "LocationKeepAlive",
            dependencies: [
                "CGPS",
                "CALSA",
                "CMosquitto",
                "CCurl",
                "CSystemdNotify",
                "CProcessControl",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
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
            resources: [.copy("Fixtures/nmea"), .copy("Fixtures/agreement")]
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
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                "CSockets",
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
