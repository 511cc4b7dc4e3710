// ScopedVapor's packages are resolved only with the package's "Vapor" trait.
#if !Vapor
#error(
    "ScopedVapor needs the Scoped package's \"Vapor\" trait: .package(url: …, from: …, traits: [\"Vapor\"])"
)
#endif
