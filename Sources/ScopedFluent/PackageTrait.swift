// ScopedFluent's packages are resolved only with the package's "Fluent" trait.
#if !Fluent
#error(
    "ScopedFluent needs the Scoped package's \"Fluent\" trait: .package(url: …, from: …, traits: [\"Fluent\"])"
)
#endif
