import Testing

/// The compiler, with the plug-in and the `Scoped` module this package's build made; found once.
private let compiler = Result { try EntryCompiler.locate() }

/// Type-checks `body` after `import Scoped` (so the body's first line is line 2).
private func compile(_ body: String) async throws -> EntryCompiler.Result {
    try await compiler.get().typecheck("import Scoped\n" + body)
}

/// The accessors every valid `@Entry` expands to.
private func accessors(_ key: String) -> String {
    """
    {
        get {
            self[\(key).self]
        }
        set {
            self[\(key).self] = newValue
        }
    }
    """
}

private typealias Diagnostic = EntryCompiler.Diagnostic
private typealias FixIt = EntryCompiler.FixIt

/// One compile at a time: each is about a second of one core, and eleven at once beside the
/// other suites would slow them all.
@Suite(.serialized)
struct EntryMacroTests {
    @Test func expandsToAccessorsAndAPrivateKeyWithAStaticLetDefault() async throws {
        let result = try await compile(
            """
            protocol MovieRepository: Sendable {}
            struct SQLiteMovieRepository: MovieRepository {}
            extension ScopedValues {
                @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
            }
            """
        )
        #expect(result.diagnostics == [])
        #expect(result.accessors == [accessors("__Key_movieRepository")])
        #expect(
            result.peers == [
                """
                private struct __Key_movieRepository: ScopedKey {
                    typealias Value = any MovieRepository
                    static let defaultValue: Value = SQLiteMovieRepository()
                }
                """
            ]
        )
    }

    @Test func keepsTheAccessLevelOfTheProperty() async throws {
        let result = try await compile(
            """
            extension ScopedValues {
                @Entry public var limit: Int = 50
            }
            """
        )
        #expect(result.diagnostics == [])
        #expect(result.accessors == [accessors("__Key_limit")])
        #expect(
            result.peers == [
                """
                private struct __Key_limit: ScopedKey {
                    typealias Value = Int
                    static let defaultValue: Value = 50
                }
                """
            ]
        )
    }

    @Test(arguments: ["String?", "Optional<String>", "Swift.Optional<String>"])
    func optionalWithoutDefaultDefaultsToNil(type: String) async throws {
        let result = try await compile(
            """
            extension ScopedValues {
                @Entry var requestID: \(type)
            }
            """
        )
        #expect(result.diagnostics == [])
        #expect(result.accessors == [accessors("__Key_requestID")])
        #expect(
            result.peers == [
                """
                private struct __Key_requestID: ScopedKey {
                    typealias Value = \(type)
                    static let defaultValue: Value = nil
                }
                """
            ]
        )
    }

    @Test func testValueArgumentAddsATestValueToTheKey() async throws {
        let result = try await compile(
            """
            protocol Greeter: Sendable {}
            struct LoudGreeter: Greeter {}
            struct UnimplementedGreeter: Greeter {}
            extension ScopedValues {
                @Entry(testValue: UnimplementedGreeter()) var greeter: any Greeter = LoudGreeter()
            }
            """
        )
        #expect(result.diagnostics == [])
        #expect(result.accessors == [accessors("__Key_greeter")])
        #expect(
            result.peers == [
                """
                private struct __Key_greeter: ScopedKey {
                    typealias Value = any Greeter
                    static let defaultValue: Value = LoudGreeter()
                    static var testValue: Value? {
                        UnimplementedGreeter()
                    }
                }
                """
            ]
        )
    }

    @Test func refusesUseOutsideAScopedValuesExtension() async throws {
        let result = try await compile(
            """
            struct Settings {}
            extension Settings {
                @Entry var limit: Int = 50
            }
            """
        )
        #expect(
            result.macroDiagnostics == [
                Diagnostic(
                    severity: "error",
                    line: 4,
                    column: 5,
                    message: "'@Entry' can only be used inside 'extension ScopedValues { … }'",
                    fromMacro: true
                )
            ]
        )
        #expect(result.accessors == [""] && result.peers == [""])
    }

    @Test func refusesLetAndOffersVar() async throws {
        let source = """
            extension ScopedValues {
                @Entry let limit: Int = 50
            }
            """
        let result = try await compile(source)
        let fixIt = FixIt(line: 3, column: 12, length: 3, replacement: "var")
        #expect(
            result.macroDiagnostics == [
                Diagnostic(
                    severity: "error",
                    line: 3,
                    column: 12,
                    message: "'@Entry' requires 'var', not 'let': scopes override entries by setting them",
                    fromMacro: true
                ),
                Diagnostic(severity: "note", line: 3, column: 12, message: "replace 'let' with 'var'", fixIt: fixIt),
            ]
        )
        #expect(result.accessors == [""] && result.peers == [""])
        // The fix-it, made, gives an entry that compiles.
        let fixed = ("import Scoped\n" + source).applying(fixIt)
        #expect(fixed.hasSuffix("@Entry var limit: Int = 50\n}"))
        let recompiled = try await compiler.get().typecheck(fixed)
        #expect(recompiled.diagnostics == [])
        #expect(recompiled.accessors == [accessors("__Key_limit")])
    }

    @Test func refusesAMissingTypeAnnotation() async throws {
        let result = try await compile(
            """
            extension ScopedValues {
                @Entry var limit = 50
            }
            """
        )
        #expect(
            result.macroDiagnostics == [
                Diagnostic(
                    severity: "error",
                    line: 3,
                    column: 16,
                    message: "'@Entry' requires an explicit type annotation: '@Entry var name: Type = defaultValue'",
                    fromMacro: true
                )
            ]
        )
        #expect(result.accessors == [""] && result.peers == [""])
    }

    @Test func refusesAMissingDefaultAndOffersOne() async throws {
        let source = """
            extension ScopedValues {
                @Entry var limit: Int
            }
            """
        let result = try await compile(source)
        let fixIt = FixIt(line: 3, column: 16, length: 10, replacement: "limit: Int = <#default value#>")
        #expect(
            result.macroDiagnostics == [
                Diagnostic(
                    severity: "error",
                    line: 3,
                    column: 16,
                    message:
                        "'@Entry' requires a default value: '@Entry var name: Type = defaultValue' (only optional entries may omit it)",
                    fromMacro: true
                ),
                Diagnostic(severity: "note", line: 3, column: 16, message: "add a default value", fixIt: fixIt),
            ]
        )
        #expect(result.accessors == [""] && result.peers == [""])
        #expect(("import Scoped\n" + source).applying(fixIt).hasSuffix("@Entry var limit: Int = <#default value#>\n}"))
    }

    @Test func refusesStaticProperties() async throws {
        let result = try await compile(
            """
            extension ScopedValues {
                @Entry static var limit: Int = 50
            }
            """
        )
        #expect(
            result.macroDiagnostics == [
                Diagnostic(
                    severity: "error",
                    line: 3,
                    column: 5,
                    message: "'@Entry' declares an instance property of 'ScopedValues': remove 'static'",
                    fromMacro: true
                )
            ]
        )
        #expect(result.accessors == [""] && result.peers == [""])
    }
}
