// swift-tools-version:6.2
import PackageDescription

// Scoped side by side with its peers, in one process: `swift run -c release ScopedBenchmarks`.

let package = Package(
    name: "ScopedBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Every product's trait: as a dependency, the package's defaults are the core's only.
        .package(name: "Scoped", path: "..", traits: ["Example"]),
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", exact: "1.17.1"),
        .package(url: "https://github.com/Swinject/Swinject.git", exact: "2.10.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/vapor/fluent-kit.git", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", exact: "2.14.0"),
    ],
    targets: [
        .target(name: "MallocCounter"),
        .systemLibrary(name: "CSQLiteBench", pkgConfig: "sqlite3"),
        .executableTarget(
            name: "ScopedBenchmarks",
            dependencies: [
                "MallocCounter",
                "CSQLiteBench",
                .product(name: "Scoped", package: "Scoped"),
                .product(name: "ScopedDatabase", package: "Scoped"),
                .product(name: "ScopedSQLite", package: "Scoped"),
                .product(name: "ScopedPostgres", package: "Scoped"),
                .product(name: "ScopedInstrumentation", package: "Scoped"),
                .product(name: "ScopedReload", package: "Scoped"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Bytes per open scope: request scopes held open in this process, and idle WebSocket
        // connections held open on a running ExampleServer (Benchmarks/memory.sh).
        .executableTarget(
            name: "ScopeMemory",
            dependencies: [
                .product(name: "Scoped", package: "Scoped"),
                .product(name: "ScopedTenants", package: "Scoped"),
            ]
        ),
        // How long after its request's commit after-commit work starts, under load, on a real
        // SQLite file (Benchmarks/after-commit-latency.sh).
        .executableTarget(
            name: "AfterCommitLatency",
            dependencies: [
                .product(name: "Scoped", package: "Scoped"),
                .product(name: "ScopedDatabase", package: "Scoped"),
                .product(name: "ScopedSQLite", package: "Scoped"),
            ]
        ),
        // The smallest server that answers `GET /movies/{id}`: no middleware, no scope.
        .executableTarget(
            name: "MinimalCatalog",
            dependencies: [
                .product(name: "ScopedSQLite", package: "Scoped"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The upcoming features the root package builds with, on every Swift target here too.
for target in package.targets where target.type != .system && target.name != "MallocCounter" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    ])
    target.swiftSettings = settings
}
