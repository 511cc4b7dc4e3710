// ScopedServiceLifecycle's packages are resolved only with the package's "ServiceLifecycle" trait.
#if !ServiceLifecycle
#error(
    "ScopedServiceLifecycle needs the Scoped package's \"ServiceLifecycle\" trait, which \"Hummingbird\" and \"Vapor\" enable: .package(url: …, from: …, traits: [\"ServiceLifecycle\"])"
)
#endif
