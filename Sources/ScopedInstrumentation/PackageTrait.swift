// ScopedInstrumentation's packages are resolved only with the package's "Instrumentation" trait.
#if !Instrumentation
#error(
    "ScopedInstrumentation needs the Scoped package's \"Instrumentation\" trait: .package(url: …, from: …, traits: [\"Instrumentation\"])"
)
#endif
