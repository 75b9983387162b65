// swift-tools-version: 6.1
import PackageDescription

/// What every integration test target runs with: the built tools (built for the tests), the
/// library, the mocks and the shared support.
let integrationDependencies: [Target.Dependency] = [
    "keepalive",
    "gnss-receiver",
    "LocationKeepAlive",
    "LocationKeepAliveMocks",
    "DeliveryMocks",
    "IntegrationSupport",
    "TestWaiting",
    .product(name: "Subprocess", package: "swift-subprocess"),
    .product(name: "SystemPackage", package: "swift-system"),
]

let package = Package(
    name: "LocationKeepAlive",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LocationKeepAlive", targets: ["LocationKeepAlive"]),
        .library(name: "KeepAliveCore", targets: ["KeepAliveCore"]),
        .library(name: "KeepAliveAudio", targets: ["KeepAliveAudio"]),
        .library(name: "KeepAliveHost", targets: ["KeepAliveHost"]),
        .library(name: "KeepAliveHostProtocol", targets: ["KeepAliveHostProtocol"]),
        .library(name: "KeepAliveJournal", targets: ["KeepAliveJournal"]),
        .library(name: "KeepAliveDelivery", targets: ["KeepAliveDelivery"]),
        .library(name: "KeepAliveService", targets: ["KeepAliveService"]),
        .library(name: "KeepAliveSimulation", targets: ["KeepAliveSimulation"]),
        .library(name: "KeepAliveMonitoring", targets: ["KeepAliveMonitoring"]),
        .library(name: "KeepAliveGeoClue", targets: ["KeepAliveGeoClue"]),
        .library(name: "KeepAliveSleep", targets: ["KeepAliveSleep"]),
        .library(name: "KeepAliveReceiver", targets: ["KeepAliveReceiver"]),
        .library(name: "LocationKeepAliveMocks", targets: ["LocationKeepAliveMocks"]),
        .library(name: "DeliveryMocks", targets: ["DeliveryMocks"]),
        .executable(name: "keepalive", targets: ["keepalive"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation --target MODULE`: build-time only, nothing linked.
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
        // Headers only: these libraries are loaded with dlopen on first use (see their shims).
        .systemLibrary(
            name: "CMosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // SQLite's C API, loaded with dlopen when a journal is first opened (see its shim).
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSDBus",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // timerfd on CLOCK_BOOTTIME_ALARM: the wake alarm of the device's sleep.
        .systemLibrary(name: "CWakeAlarm"),
        // sd_notify's datagram protocol to $NOTIFY_SOCKET, in a few lines of C: no libsystemd.
        .systemLibrary(name: "CSystemdNotify"),
        // The listening socket of `keepalive run --metrics`.
        .systemLibrary(name: "CSockets"),
        // The host's process control: accept4, posix_spawn's closefrom, opening a file as a user.
        .systemLibrary(name: "CProcessControl"),
        .systemLibrary(name: "CProcessEvents"),
        // A service's memory: the loader's loaded objects (dl_iterate_phdr) and malloc's arenas (mallopt).
        .systemLibrary(name: "CProcessMemory"),
        // The library, a module per layer (the graph is drawn in "How it is built").
        .target(
            name: "KeepAliveCore",
            dependencies: [
                "CGPS",
                "CProcessMemory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                // SIGINT and SIGTERM trapped for a clean stop (InterruptSignals): a few hundred lines over Dispatch.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "KeepAliveAudio",
            dependencies: ["KeepAliveCore", "CALSA", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The host's wire: requests, replies, notices and the client, all an app links to speak to it.
        .target(
            name: "KeepAliveHostProtocol",
            dependencies: ["KeepAliveCore", "KeepAliveMonitoring", "CProcessControl"]
        ),
        .target(
            name: "KeepAliveHost",
            dependencies: ["KeepAliveCore", "KeepAliveHostProtocol", "KeepAliveMonitoring", "KeepAliveSleep", "CProcessControl", "CProcessEvents", .product(name: "Logging", package: "swift-log")]
        ),
        // GeoClue2 on the system bus, served by the host (sd-bus, loaded when it starts).
        // sd-bus, loaded when first used: the GeoClue2 service's and logind's bus.
        .target(
            name: "KeepAliveBus",
            dependencies: ["KeepAliveCore", "CSDBus", "CProcessControl"]
        ),
        // The device's sleep under the model's rules: logind's locks and signals, wake alarms.
        .target(
            name: "KeepAliveSleep",
            dependencies: ["KeepAliveCore", "KeepAliveBus", "CSDBus", "CWakeAlarm"]
        ),
        // The receiver's power: a u-blox through gpsd, a modem's GNSS through ModemManager, gpsd's hook.
        .target(
            name: "KeepAliveReceiver",
            dependencies: ["KeepAliveCore", "KeepAliveBus"]
        ),
        .target(
            name: "KeepAliveGeoClue",
            dependencies: ["KeepAliveCore", "KeepAliveBus", "CSDBus", .product(name: "Logging", package: "swift-log")]
        ),
        // SQLite behind a small typed layer: connections, statements, rows, transactions, migrations.
        .target(
            name: "KeepAliveSQLite",
            dependencies: ["KeepAliveCore", "CSQLite"]
        ),
        .target(
            name: "KeepAliveJournal",
            dependencies: [
                "KeepAliveCore",
                "KeepAliveMonitoring",
                "KeepAliveSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "KeepAliveDelivery",
            dependencies: [
                "KeepAliveCore",
                "KeepAliveJournal",
                "KeepAliveMonitoring",
                "CMosquitto",
                "CCurl",
                "CSodium",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KeepAliveService",
            dependencies: [
                "KeepAliveCore",
                "KeepAliveAudio",
                "KeepAliveHostProtocol",
                "KeepAliveMonitoring",
                "KeepAliveSleep",
                "CSystemdNotify",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KeepAliveSimulation",
            dependencies: ["KeepAliveCore", "KeepAliveHostProtocol", "KeepAliveMonitoring", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "KeepAliveMonitoring",
            dependencies: ["KeepAliveCore", .product(name: "Logging", package: "swift-log")]
        ),
        // Every module under one name (source-compatible with the single module it was).
        .target(
            name: "LocationKeepAlive",
            dependencies: [
                "KeepAliveCore", "KeepAliveAudio", "KeepAliveHost", "KeepAliveHostProtocol", "KeepAliveJournal", "KeepAliveDelivery",
                "KeepAliveService", "KeepAliveSimulation", "KeepAliveMonitoring", "KeepAliveGeoClue", "KeepAliveSleep",
                "KeepAliveReceiver",
            ]
        ),
        // Test doubles, each depending only on what it stands in for.
        .target(
            name: "LocationKeepAliveMocks",
            dependencies: ["KeepAliveCore", .product(name: "Clocks", package: "swift-clocks")],
            path: "Mocks",
            exclude: ["Fixtures/README.md", "Delivery", "Receiver"],
            resources: [.copy("Fixtures/nmea"), .copy("Fixtures/agreement"), .copy("Fixtures/tracks")]
        ),
        // A GNSS receiver that can be switched off, simulated under the real gpsd: the model, and
        // `gnss-receiver`, which runs it on a pseudo-terminal.
        .target(
            name: "ReceiverSimulation",
            dependencies: ["KeepAliveCore", "KeepAliveReceiver"],
            path: "Mocks/Receiver/Simulation"
        ),
        .executableTarget(
            name: "gnss-receiver",
            dependencies: ["ReceiverSimulation", "KeepAliveCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Mocks/Receiver/Command"
        ),
        .target(
            name: "DeliveryMocks",
            dependencies: ["KeepAliveCore", "KeepAliveJournal", "KeepAliveDelivery"],
            path: "Mocks/Delivery"
        ),
        // The command-line tool, one binary for every command: the commands, and apart from them
        // (so that the commands module needs no journal) the commands that keep a journal.
        .target(
            name: "KeepAliveCommands",
            dependencies: [
                "KeepAliveCore",
                "KeepAliveAudio",
                "KeepAliveHost",
                "KeepAliveHostProtocol",
                "KeepAliveGeoClue",
                "KeepAliveService",
                "KeepAliveSimulation",
                "KeepAliveMonitoring",
                "KeepAliveReceiver",
                "CSockets",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .target(
            name: "KeepAliveJournalCommands",
            dependencies: [
                "KeepAliveCommands",
                "KeepAliveCore",
                "KeepAliveJournal",
                "KeepAliveDelivery",
                "KeepAliveMonitoring",
                "KeepAliveService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(name: "keepalive", dependencies: ["KeepAliveCommands", "KeepAliveJournalCommands"]),
        .executableTarget(
            name: "keepalive-bench",
            dependencies: ["LocationKeepAlive"],
            path: "Benchmarks/keepalive-bench"
        ),
        // The articles' complete programs, as printed, each a process of its own for the docs'
        // tests (signals, gpsd and a broker on their usual ports): `article-programs NAME`.
        .executableTarget(
            name: "article-programs",
            dependencies: ["LocationKeepAlive"],
            path: "Tests/ArticlePrograms"
        ),
        // Unit tests, a target per module they test, linking only it (and its mocks).
        .testTarget(
            name: "KeepAliveCoreTests",
            dependencies: [
                "TestWaiting", "KeepAliveCore", "LocationKeepAliveMocks", "CProcessControl", .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // GeoClue2's rules that need no bus: accuracy levels and coarse positions.
        .testTarget(
            name: "KeepAliveGeoClueTests",
            dependencies: ["TestWaiting", "KeepAliveGeoClue", "KeepAliveCore"]
        ),
        // The execution model and the strategies, on the simulator's virtual clock.
        .testTarget(
            name: "KeepAliveSimulationTests",
            dependencies: [
                "TestWaiting", "KeepAliveCore", "KeepAliveSimulation", "KeepAliveMonitoring", "LocationKeepAliveMocks",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // Regions, significant changes, visits: on real tracks and scripted noise.
        .testTarget(
            name: "KeepAliveMonitoringTests",
            dependencies: ["TestWaiting", "KeepAliveCore", "KeepAliveMonitoring", "LocationKeepAliveMocks"]
        ),
        // The journal's SQLite layer on real files.
        .testTarget(
            name: "KeepAliveSQLiteTests",
            dependencies: ["TestWaiting", "KeepAliveSQLite"]
        ),
        .testTarget(
            name: "KeepAliveJournalTests",
            dependencies: [
                "TestWaiting", "KeepAliveCore", "KeepAliveJournal", "KeepAliveMonitoring", "KeepAliveDelivery", "DeliveryMocks",
                "LocationKeepAliveMocks", .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // The host's and the service's decisions, in their machines (on a test clock).
        .testTarget(
            name: "KeepAliveHostTests",
            dependencies: ["TestWaiting", "KeepAliveCore", "KeepAliveHost", "KeepAliveHostProtocol", "KeepAliveMonitoring"]
        ),
        // The host's wire: its commands and notices, read and written as apps see them.
        .testTarget(
            name: "KeepAliveHostProtocolTests",
            dependencies: ["TestWaiting", "KeepAliveCore", "KeepAliveHostProtocol", "KeepAliveMonitoring"]
        ),
        .testTarget(
            name: "KeepAliveReceiverTests",
            dependencies: ["TestWaiting", "KeepAliveCore", "KeepAliveReceiver", "ReceiverSimulation"]
        ),
        .testTarget(
            name: "KeepAliveSleepTests",
            dependencies: ["TestWaiting", "KeepAliveCore", "KeepAliveSleep"]
        ),
        .testTarget(
            name: "KeepAliveServiceTests",
            dependencies: [
                "TestWaiting", "KeepAliveCore", "KeepAliveHostProtocol", "KeepAliveMonitoring", "KeepAliveService", "KeepAliveSleep",
                "LocationKeepAliveMocks",
            ]
        ),
        // The parsers' fuzz findings (NMEA, gpsd JSON, the host's protocol), replayed.
        .testTarget(
            name: "FuzzRegressionTests",
            dependencies: ["KeepAliveCore", "KeepAliveHost", "KeepAliveHostProtocol"],
            exclude: ["FuzzRegressions"]
        ),
        // Every Swift snippet of the DocC articles, compiled (and checked to match the articles).
        .testTarget(
            name: "ArticleSnippetTests",
            dependencies: [
                "LocationKeepAlive", "LocationKeepAliveMocks", "DeliveryMocks", "IntegrationSupport",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // What every test waits with: blocking work on threads of its own, conditions polled off
        // the concurrency pool, a child's end told by the kernel, every real-time bound scaled
        // by KEEPALIVE_TEST_TIME_SCALE (scripts/check-test-waits keeps tests to it).
        .target(name: "TestWaiting", dependencies: ["CProcessControl"], path: "Tests/TestWaiting"),
        // What the integration suites share: running the built tools, gpsfake, brokers, the
        // host's harness, the articles' snippets. A target of its own, so that each suite that
        // needs the machine to itself is a test target of its own (scripts/test routes by target).
        .target(
            name: "IntegrationSupport",
            dependencies: [
                "CProcessControl",
                "LocationKeepAlive",
                "LocationKeepAliveMocks",
                "TestWaiting",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/IntegrationSupport"
        ),
        // The built CLI end to end, a real gpsd through gpsfake, the mock gpsd, real ALSA faults.
        .testTarget(
            name: "IntegrationTests",
            dependencies: integrationDependencies
        ),
        // The host's suites: real freezes as root, one at a time (the host step).
        .testTarget(
            name: "HostIntegrationTests",
            dependencies: integrationDependencies + ["KeepAliveHost"]
        ),
        // Delivery to real brokers under faults (the delivery step).
        .testTarget(
            name: "DeliveryIntegrationTests",
            dependencies: integrationDependencies
        ),
        // The broker's link cut for two minutes (the cut step, beside the host's).
        .testTarget(
            name: "NetworkCutTests",
            dependencies: integrationDependencies
        ),
        // The docs' manifest resolved as printed, and the articles' programs run as printed (the docs step).
        .testTarget(
            name: "DocsIntegrationTests",
            dependencies: ["IntegrationSupport"]
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

// The ThreadSanitizer build (scripts/tsan sets KEEPALIVE_TSAN_BUILD=1, in its own build folder)
// compiles only what runs under it: the concurrent code's suites and the tools they run. The pure
// code's suites (the simulator, region monitoring, GeoClue's rules, the fuzz findings, the
// articles' snippets), the docs' manifest check and the benchmarks run unsanitized only
// (scripts/tsan says why): compiled with ThreadSanitizer, they were built for nothing.
if Context.environment["KEEPALIVE_TSAN_BUILD"] == "1" {
    let unsanitized: Set = [
        "KeepAliveGeoClueTests", "KeepAliveSimulationTests", "KeepAliveMonitoringTests", "FuzzRegressionTests", "ArticleSnippetTests",
        "DocsIntegrationTests", "keepalive-bench", "article-programs",
    ]
    package.targets.removeAll { unsanitized.contains($0.name) }
}
