import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides Scoped's macros.
@main
struct ScopedMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntryMacro.self]
}
