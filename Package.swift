// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Scoped",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Scoped", targets: ["Scoped"]),
        .library(name: "ScopedTesting", targets: ["ScopedTesting"]),
        .library(name: "ScopedSQLite", targets: ["ScopedSQLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.0"),
    ],
    targets: [
        .macro(
            name: "ScopedMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(name: "Scoped", dependencies: ["ScopedMacros"]),
        .target(name: "ScopedTesting", dependencies: ["Scoped"]),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "ScopedSQLite", dependencies: ["Scoped", "CSQLite"]),
        .testTarget(name: "ScopedTests", dependencies: ["Scoped"]),
        .testTarget(name: "ScopedTestingTests", dependencies: ["ScopedTesting"]),
        .testTarget(name: "ScopedSQLiteTests", dependencies: ["ScopedSQLite", "ScopedTesting"]),
        .testTarget(
            name: "ScopedMacrosTests",
            dependencies: [
                "ScopedMacros",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
