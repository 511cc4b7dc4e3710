import Foundation
@testable import Scoped
import Testing

// The README's example, compiled and run. `readmeShowsThisExample` keeps the two identical.
// README-EXAMPLE-BEGIN
protocol Greeter: Sendable { func greet(_ name: String) -> String }
struct EnglishGreeter: Greeter { func greet(_ name: String) -> String { "Hello, \(name)" } }
struct PirateGreeter: Greeter { func greet(_ name: String) -> String { "Ahoy, \(name)" } }

extension ScopedValues {
    @Entry var greeter: any Greeter = EnglishGreeter()  // declare, with a default
}

struct WelcomeHandler {
    @Scoped(\.greeter) var greeter  // read: resolved against the current scope
    func handle(_ name: String) -> String { greeter.greet(name) }
}
// README-EXAMPLE-END

struct ReadmeExampleTests {
    @Test func exampleBehavesAsTheReadmeSays() {
        let handler = WelcomeHandler()
        #expect(handler.handle("Ada") == "Hello, Ada")
        let overridden = withScopedValues({ $0.greeter = PirateGreeter() }) {
            handler.handle("Ada")
        }
        #expect(overridden == "Ahoy, Ada")
        #expect(handler.handle("Ada") == "Hello, Ada")
    }

    @Test func readmeShowsThisExample() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let test = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
        let begin = try #require(test.range(of: "// README-EXAMPLE-BEGIN\n"))
        let end = try #require(test.range(of: "// README-EXAMPLE-END"))
        let declarations = String(test[begin.upperBound..<end.lowerBound])
        #expect(readme.contains(declarations), "README.md must show the declarations compiled here, unchanged")
        #expect(readme.contains("handler.handle(\"Ada\")  // \"Hello, Ada\""))
        #expect(readme.contains("withScopedValues({ $0.greeter = PirateGreeter() }) {"))
        #expect(readme.contains("handler.handle(\"Ada\")  // \"Ahoy, Ada\""))
    }

    /// The Install section's manifest lines name traits and products this package declares, and
    /// each product's target comes with a trait the line enables (or needs none).
    @Test func readmeInstallNamesWhatThePackageDeclares() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        let dependency = try #require(
            readme.split(separator: "\n").first { $0.hasPrefix(".package(url: \"https://github.com/scoped-swift/") }
        )
        let traits = try #require(dependency.firstMatch(of: /traits: \[([^\]]*)\]/)).1
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\""]) }
        #expect(traits == ["Macros", "Hummingbird"])
        for trait in traits {
            let declaration = try Regex("\\.trait\\(\\s*name: \"\(trait)\"")
            #expect(manifest.contains(declaration), "Package.swift declares no trait \(trait)")
        }
        let products = readme.matches(of: /\.product\(name: "(\w+)", package: "scoped"\)/).map { String($0.1) }
        #expect(products == ["Scoped", "ScopedHummingbird", "ScopedTesting"])
        for product in products {
            #expect(manifest.contains(".library(name: \"\(product)\""), "Package.swift declares no product \(product)")
            // A product whose target needs a trait needs one the README's line enables.
            if let needed = manifest.firstMatch(of: try Regex("\"\(product)\": \"(\\w+)\"")) {
                #expect(traits.contains(String(needed.output[1].substring ?? "")), "\(product) needs a trait")
            }
        }
    }

    /// The Install section's product table lists every library this package declares, each with
    /// the trait its target needs.
    @Test func readmeProductTableListsEveryProductWithItsTrait() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        let declared = manifest.matches(of: /\.library\(name: "(\w+)"/).map { String($0.1) }
        let tableStart = try #require(readme.range(of: "| product | trait | what it pulls in |"))
        let table = String(readme[tableStart.lowerBound...]).components(separatedBy: "\n\n")[0]
        let rows = Dictionary(
            table.matches(of: /\n\| `(\w+)` \| ([^|]+) \|/).map { (String($0.1), String($0.2)) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(Set(rows.keys) == Set(declared))
        for product in declared {
            let needed = manifest.firstMatch(of: try Regex("\"\(product)\": \"(\\w+)\""))?.output[1].substring
            let row = try #require(rows[product])
            if let needed {
                #expect(row.contains("`\(needed)`"), "README names no trait for \(product): \(row)")
            }
        }
    }

    /// The README is a front door: at most 150 lines, and every file it links exists.
    @Test func readmeIsShortAndEveryLinkedFileExists() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 151)
        let links = readme.matches(of: /\]\(([^)#:]+)\)/).map { String($0.1) }
        #expect(links.count >= 10)
        for link in links {
            #expect(FileManager.default.fileExists(atPath: root.appending(path: link).path), "README links \(link)")
        }
    }

    /// `.spi.yml` documents every library product, and scripts/symbol-graphs (which the
    /// documentation site and the public-API check read) lists the same ones.
    @Test func everyProductIsDocumentedAndItsAPIRecorded() throws {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        let declared = Set(manifest.matches(of: /\.library\(name: "(\w+)"/).map { String($0.1) })
        let spi = try String(contentsOf: root.appending(path: ".spi.yml"), encoding: .utf8)
        let documented = spi.split(separator: "\n").compactMap { $0.wholeMatch(of: /\s+- (\w+)/)?.1 }
        #expect(Set(documented.map(String.init)) == declared)
        let script = try String(contentsOf: root.appending(path: "scripts/symbol-graphs"), encoding: .utf8)
        let list = try #require(script.firstMatch(of: /targets=\(([^)]*)\)/)).1
        #expect(Set(list.split(whereSeparator: \.isWhitespace).map(String.init)) == declared)
        for product in declared {
            #expect(FileManager.default.fileExists(atPath: root.appending(path: "PublicAPI/\(product).txt").path))
        }
    }
}
