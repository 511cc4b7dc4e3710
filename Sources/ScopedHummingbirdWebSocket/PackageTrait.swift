// ScopedHummingbirdWebSocket's packages are resolved only with the package's "HummingbirdWebSocket" trait.
#if !HummingbirdWebSocket
#error(
    "ScopedHummingbirdWebSocket needs the Scoped package's \"HummingbirdWebSocket\" trait: .package(url: …, from: …, traits: [\"HummingbirdWebSocket\"])"
)
#endif
