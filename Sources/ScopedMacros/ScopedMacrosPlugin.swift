import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides Scoped's macros.
///
/// Built for the host only: nothing links this target, so swift-syntax is compiled once, for the
/// plug-in. Its tests (`ScopedMacrosTests`) run the compiler on sources that use the macro, as a
/// user's build does.
@main
struct ScopedMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntryMacro.self]
}
