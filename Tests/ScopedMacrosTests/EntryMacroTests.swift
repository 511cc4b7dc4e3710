import ScopedMacrosImplementation
import SwiftSyntaxMacrosGenericTestSupport
import SwiftSyntaxMacroExpansion
import Testing

private let macros: [String: MacroSpec] = ["Entry": MacroSpec(type: EntryMacro.self)]

/// Runs swift-syntax's expansion assertion and records its failures as Swift Testing issues.
private func assertExpansion(
    _ source: String,
    expandedSource: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source,
        expandedSource: expandedSource,
        diagnostics: diagnostics,
        macroSpecs: macros,
        applyFixIts: applyFixIts,
        fixedSource: fixedSource,
        failureHandler: { failure in Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation) }
    )
}

struct EntryMacroTests {
    @Test func expandsToAccessorsAndAPrivateKeyWithAStaticLetDefault() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry var movieRepository: any MovieRepository = SQLiteMovieRepository()
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    var movieRepository: any MovieRepository {
                        get {
                            self[__Key_movieRepository.self]
                        }
                        set {
                            self[__Key_movieRepository.self] = newValue
                        }
                    }

                    private struct __Key_movieRepository: ScopedKey {
                        typealias Value = any MovieRepository
                        static let defaultValue: Value = SQLiteMovieRepository()
                    }
                }
                """
        )
    }

    @Test func keepsTheAccessLevelOfTheProperty() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry public var limit: Int = 50
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    public var limit: Int {
                        get {
                            self[__Key_limit.self]
                        }
                        set {
                            self[__Key_limit.self] = newValue
                        }
                    }

                    private struct __Key_limit: ScopedKey {
                        typealias Value = Int
                        static let defaultValue: Value = 50
                    }
                }
                """
        )
    }

    @Test(arguments: ["String?", "Optional<String>", "Swift.Optional<String>"])
    func optionalWithoutDefaultDefaultsToNil(type: String) {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry var requestID: \(type)
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    var requestID: \(type) {
                        get {
                            self[__Key_requestID.self]
                        }
                        set {
                            self[__Key_requestID.self] = newValue
                        }
                    }

                    private struct __Key_requestID: ScopedKey {
                        typealias Value = \(type)
                        static let defaultValue: Value = nil
                    }
                }
                """
        )
    }

    @Test func refusesUseOutsideAScopedValuesExtension() {
        assertExpansion(
            """
            extension Settings {
                @Entry var limit: Int = 50
            }
            """,
            expandedSource: """
                extension Settings {
                    var limit: Int = 50
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Entry' can only be used inside 'extension ScopedValues { … }'",
                    line: 2,
                    column: 5
                )
            ]
        )
    }

    @Test func refusesLetAndOffersVar() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry let limit: Int = 50
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    let limit: Int = 50
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Entry' requires 'var', not 'let': scopes override entries by setting them",
                    line: 2,
                    column: 12,
                    fixIts: [FixItSpec(message: "replace 'let' with 'var'")]
                )
            ],
            applyFixIts: ["replace 'let' with 'var'"],
            fixedSource: """
                extension ScopedValues {
                    @Entry var limit: Int = 50
                }
                """
        )
    }

    @Test func refusesAMissingTypeAnnotation() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry var limit = 50
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    var limit = 50
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Entry' requires an explicit type annotation: '@Entry var name: Type = defaultValue'",
                    line: 2,
                    column: 16
                )
            ]
        )
    }

    @Test func refusesAMissingDefaultAndOffersOne() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry var limit: Int
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    var limit: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "'@Entry' requires a default value: '@Entry var name: Type = defaultValue' (only optional entries may omit it)",
                    line: 2,
                    column: 16,
                    fixIts: [FixItSpec(message: "add a default value")]
                )
            ],
            applyFixIts: ["add a default value"],
            fixedSource: """
                extension ScopedValues {
                    @Entry var limit: Int = <#default value#>
                }
                """
        )
    }

    @Test func refusesStaticProperties() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry static var limit: Int = 50
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    static var limit: Int = 50
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Entry' declares an instance property of 'ScopedValues': remove 'static'",
                    line: 2,
                    column: 5
                )
            ]
        )
    }

    @Test func testValueArgumentAddsATestValueToTheKey() {
        assertExpansion(
            """
            extension ScopedValues {
                @Entry(testValue: UnimplementedClock()) var clock: any Clock = SystemClock()
            }
            """,
            expandedSource: """
                extension ScopedValues {
                    var clock: any Clock {
                        get {
                            self[__Key_clock.self]
                        }
                        set {
                            self[__Key_clock.self] = newValue
                        }
                    }

                    private struct __Key_clock: ScopedKey {
                        typealias Value = any Clock
                        static let defaultValue: Value = SystemClock()
                        static var testValue: Value? {
                            UnimplementedClock()
                        }
                    }
                }
                """
        )
    }
}
