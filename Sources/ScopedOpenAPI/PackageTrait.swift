// ScopedOpenAPI's packages are resolved only with the package's "OpenAPI" trait.
#if !OpenAPI
#error(
    "ScopedOpenAPI needs the Scoped package's \"OpenAPI\" trait: .package(url: …, from: …, traits: [\"OpenAPI\"])"
)
#endif
