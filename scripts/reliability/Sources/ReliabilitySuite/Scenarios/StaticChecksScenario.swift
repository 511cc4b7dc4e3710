import Foundation

/// 9a.
///
/// No SQL text built by splicing values, checked over the shipped sources (`Sources/`).
///
/// SQL reaches SQLite in three ways, and the check closes each:
/// - the C entry points (`sqlite3_prepare*`, `sqlite3_exec`) are called in one file only,
///   `SQLiteConnection.swift`;
/// - `SQL` values bind every interpolation, so SQL text can be spliced only by building a `SQL`
///   from a run-time string (`SQL(stringLiteral:)`, `appendLiteral`) outside `SQL.swift`;
/// - `executeScript(_:)` takes a `String`: each call must pass a literal without interpolation,
///   or be one of the reviewed exceptions below.
enum StaticChecksScenario {
    static let connectionFile = "Sources/ScopedSQLite/SQLiteConnection.swift"
    static let sqlFile = "Sources/ScopedSQLite/SQL.swift"

    /// `executeScript` arguments that are not plain literals, each reviewed.
    static let reviewed: [String: String] = [
        "migrationStatement": "the schema, written by the app's developer in code; it holds no values",
        "configuration.synchronous.pragmaStatement": "one fixed literal per case of a closed enum",
        #""PRAGMA user_version = \(migration.version)""#: "an Int from code; PRAGMA takes no bound parameters",
    ]

    struct Violation: CustomStringConvertible {
        var file: String
        var line: Int
        var rule: String
        var description: String { "\(file):\(line): \(rule)" }
    }

    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("static")
        let root = suite.packageFolder
        var files: [(String, String)] = []
        let enumerator = FileManager.default.enumerator(
            at: root.appending(path: "Sources"),
            includingPropertiesForKeys: nil
        )
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let relative = String(url.path.dropFirst(root.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        let (violations, exceptions) = check(files)
        result.report("\(files.count) source files, \(exceptions) reviewed executeScript exceptions")
        result.check("SQL built by splicing values: \(violations.count) sites", target: "0", violations.isEmpty)
        if let first = violations.first { result.report("first: \(first)") }

        // The check must catch what it claims to: three planted violations, one of each kind.
        let planted = [
            ("Sources/App/Bad1.swift", #"try connection.executeScript("DELETE FROM movies WHERE id = \(id)")"#),
            (
                "Sources/App/Bad2.swift",
                #"let sql = SQL(stringLiteral: "SELECT * FROM movies WHERE title = '" + title + "'")"#
            ),
            ("Sources/App/Bad3.swift", #"sqlite3_exec(handle, text, nil, nil, nil)"#),
        ]
        let caught = check(planted).violations.count
        result.check(
            "planted violations caught \(caught)/\(planted.count)",
            target: "\(planted.count)",
            caught == planted.count
        )
        return result
    }

    static func check(_ files: [(String, String)]) -> (violations: [Violation], exceptions: Int) {
        var violations: [Violation] = []
        var exceptions = 0
        for (path, text) in files {
            func line(at index: String.Index) -> Int { text[..<index].count(where: { $0 == "\n" }) + 1 }
            if path != connectionFile {
                for sink in ["sqlite3_prepare", "sqlite3_exec"] {
                    for range in text.ranges(of: sink) {
                        violations.append(
                            Violation(
                                file: path,
                                line: line(at: range.lowerBound),
                                rule: "\(sink) outside \(connectionFile)"
                            )
                        )
                    }
                }
            }
            if path != sqlFile {
                for builder in ["SQL(stringLiteral:", "SQL(stringInterpolation:", ".appendLiteral("] {
                    for range in text.ranges(of: builder) {
                        violations.append(
                            Violation(
                                file: path,
                                line: line(at: range.lowerBound),
                                rule: "SQL built from a run-time string with \(builder)"
                            )
                        )
                    }
                }
            }
            for range in text.ranges(of: "executeScript(") {
                if text[..<range.lowerBound].hasSuffix("func ") { continue }
                let argument = Self.argument(in: text, from: range.upperBound)
                if reviewed[argument] != nil {
                    exceptions += 1
                } else if !(argument.hasPrefix("\"") && !argument.contains("\\(")) {
                    violations.append(
                        Violation(
                            file: path,
                            line: line(at: range.lowerBound),
                            rule: "executeScript(\(argument.prefix(60)))"
                        )
                    )
                }
            }
        }
        return (violations, exceptions)
    }

    /// The text of the call's argument: up to the parenthesis that closes the call, skipping
    /// parentheses inside string literals and interpolations.
    static func argument(in text: String, from start: String.Index) -> String {
        var depth = 0
        var inString = false
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" && (index == start || text[text.index(before: index)] != "\\") {
                inString.toggle()
            } else if character == "(" && (!inString || text[text.index(before: index)] == "\\") {
                depth += 1
                if inString {
                    inString = false
                    depth += 1000
                }  // interpolation: back to code
            } else if character == ")" {
                if depth >= 1000 {
                    depth -= 1001
                    inString = true
                } else if depth == 0 {
                    break
                } else {
                    depth -= 1
                }
            }
            index = text.index(after: index)
        }
        return text[start..<index].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
