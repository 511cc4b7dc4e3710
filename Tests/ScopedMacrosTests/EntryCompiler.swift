import Foundation
import Testing

/// The compiler, run on a source file that uses `@Entry`, as a user's build runs it: the
/// `Scoped` module and the `ScopedMacros` plug-in are the ones this package's build made.
///
/// Expanding the macro in the test process instead (swift-syntax's `assertMacroExpansion`) would
/// link swift-syntax into the tests, and SwiftPM would compile it a second time, for the target
/// as well as for the host that runs the plug-in.
struct EntryCompiler {
    /// What the compiler made of one source file.
    struct Result {
        /// The accessors each `@Entry` expanded to, one text per attribute.
        var accessors: [String] = []
        /// The peer declarations each `@Entry` expanded to, one text per attribute.
        var peers: [String] = []
        /// Every diagnostic, in the order the compiler printed them.
        var diagnostics: [Diagnostic] = []

        /// The diagnostics the macro reported, and the notes that follow them; the compiler's own
        /// errors about the declaration the macro left alone are not the macro's.
        var macroDiagnostics: [Diagnostic] {
            var result: [Diagnostic] = []
            var afterTheMacros = false
            for diagnostic in diagnostics {
                if diagnostic.fromMacro || (afterTheMacros && diagnostic.severity == "note") {
                    result.append(diagnostic)
                    afterTheMacros = true
                } else {
                    afterTheMacros = false
                }
            }
            return result
        }
    }

    /// One diagnostic: where, what, and the one edit its fix-it makes, if it has one.
    struct Diagnostic: Equatable, CustomStringConvertible {
        var severity: String
        var line: Int
        var column: Int
        var message: String
        var fixIt: FixIt? = nil
        /// Whether the compiler said the macro reported it (`(from macro 'Entry')`).
        var fromMacro = false

        var description: String {
            "\(line):\(column): \(severity): \(message)" + (fixIt.map { " [fix-it: \($0)]" } ?? "")
        }
    }

    /// A fix-it's edit: the text from `column` on `line`, `length` characters long, becomes `replacement`.
    struct FixIt: Equatable, CustomStringConvertible {
        var line: Int
        var column: Int
        var length: Int
        var replacement: String

        var description: String { "\(line):\(column)+\(length) -> \(replacement)" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let swiftc: URL
    let modules: URL
    let plugin: URL

    /// The compiler on `PATH` and the build products beside the running test binary.
    static func locate() throws -> EntryCompiler {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard
            let swiftc = path.split(separator: ":").map({ URL(fileURLWithPath: String($0)).appending(path: "swiftc") })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { throw Failure(description: "no swiftc on PATH (\(path))") }
        // SwiftPM's native build puts the plug-in at `ScopedMacros-tool` and the modules in
        // `Modules/`; its swift-build backend (Swift 6.4) at `ScopedMacros` and beside the products.
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        while folder.path != "/" {
            for (plugin, modules) in [("ScopedMacros-tool", "Modules"), ("ScopedMacros", ".")] {
                let pluginURL = folder.appending(path: plugin)
                let modulesURL = folder.appending(path: modules)
                if FileManager.default.isExecutableFile(atPath: pluginURL.path),
                    FileManager.default.fileExists(atPath: modulesURL.appending(path: "Scoped.swiftmodule").path)
                {
                    return EntryCompiler(swiftc: swiftc, modules: modulesURL, plugin: pluginURL)
                }
            }
            folder = folder.deletingLastPathComponent()
        }
        throw Failure(description: "no ScopedMacros plug-in and Scoped module above \(executable.path)")
    }

    /// Type-checks `source` (which imports `Scoped` itself) and returns the expansions and diagnostics.
    ///
    /// The compiler runs, and is waited for, on a thread of its own: a test that waited for it on
    /// one of the cooperative pool's threads (two on this machine) would hold up every other test
    /// in the process meanwhile (beside a build, for half a minute).
    func typecheck(_ source: String) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appending(path: "entry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileName = "Entries.swift"
        try source.write(to: folder.appending(path: fileName), atomically: true, encoding: .utf8)

        let arguments = [
            "-typecheck", fileName, "-I", modules.path,
            "-load-plugin-executable", "\(plugin.path)#ScopedMacros",
            // One diagnostic per line, with its fix-it's text under the range it replaces.
            "-diagnostic-style", "llvm",
            "-Xfrontend", "-dump-macro-expansions",
        ]
        let swiftc = swiftc
        let output = try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result {
                        let process = Process()
                        process.executableURL = swiftc
                        process.currentDirectoryURL = folder
                        process.arguments = arguments
                        let output = Pipe()
                        process.standardOutput = output
                        process.standardError = output
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return String(decoding: data, as: UTF8.self)
                    }
                )
            }
            .start()
        }
        return Self.parse(output, file: fileName)
    }

    /// Reads `-dump-macro-expansions` buffers and LLVM-style diagnostics from the compiler's output.
    static func parse(_ output: String, file: String) -> Result {
        var result = Result()
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let separator = String(repeating: "-", count: 30)
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("@__swiftmacro_"), index + 1 < lines.count, lines[index + 1] == separator {
                // `@__swiftmacro_…fMa_.swift` is an accessor expansion, `…fMp_.swift` a peer one.
                var end = index + 2
                while end < lines.count, lines[end] != separator { end += 1 }
                let text = lines[(index + 2)..<min(end, lines.count)].joined(separator: "\n")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if line.contains("fMa_") { result.accessors.append(text) }
                if line.contains("fMp_") { result.peers.append(text) }
                index = end + 1
            } else if var diagnostic = readDiagnostic(line, file: file) {
                // The source line, the caret line under the range, then any fix-it's text.
                if index + 3 < lines.count, diagnostic.severity == "note",
                    let caret = lines[index + 2].firstIndex(of: "^"),
                    readDiagnostic(lines[index + 3], file: file) == nil, !lines[index + 3].hasPrefix("@__swiftmacro_"),
                    !lines[index + 3].isEmpty
                {
                    let column = lines[index + 2].distance(from: lines[index + 2].startIndex, to: caret)
                    let length = lines[index + 2][caret...].prefix(while: { $0 == "^" || $0 == "~" }).count
                    diagnostic.fixIt = FixIt(
                        line: diagnostic.line,
                        column: column + 1,
                        length: length,
                        replacement: String(lines[index + 3].dropFirst(column))
                    )
                    index += 4
                } else {
                    index += 1
                }
                result.diagnostics.append(diagnostic)
            } else {
                index += 1
            }
        }
        return result
    }

    /// `Entries.swift:3:12: error: message (from macro 'Entry ')`, read; `nil` for any other line.
    private static func readDiagnostic(_ line: String, file: String) -> Diagnostic? {
        guard line.hasPrefix(file + ":") else { return nil }
        let fields = line.dropFirst(file.count + 1)
            .split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, let number = Int(fields[0]), let column = Int(fields[1]) else { return nil }
        let severity = fields[2].trimmingCharacters(in: .whitespaces)
        var message = fields[3].trimmingCharacters(in: .whitespaces)
        var fromMacro = false
        if let range = message.range(of: " (from macro '", options: .backwards), message.hasSuffix("')") {
            message = String(message[..<range.lowerBound])
            fromMacro = true
        }
        return Diagnostic(severity: severity, line: number, column: column, message: message, fromMacro: fromMacro)
    }
}

extension String {
    /// This text with `fixIt`'s edit made.
    func applying(_ fixIt: EntryCompiler.FixIt) -> String {
        var lines = split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let line = lines[fixIt.line - 1]
        let start = line.index(line.startIndex, offsetBy: fixIt.column - 1)
        let end = line.index(start, offsetBy: fixIt.length)
        lines[fixIt.line - 1] = String(line[..<start]) + fixIt.replacement + String(line[end...])
        return lines.joined(separator: "\n")
    }
}
