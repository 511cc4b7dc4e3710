// ScopedHummingbird's packages are resolved only with the package's "Hummingbird" trait.
#if !Hummingbird
#error(
    "ScopedHummingbird needs the Scoped package's \"Hummingbird\" trait: .package(url: …, from: …, traits: [\"Hummingbird\"])"
)
#endif
