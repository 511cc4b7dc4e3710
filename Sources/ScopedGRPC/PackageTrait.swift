// ScopedGRPC's packages are resolved only with the package's "GRPC" trait.
#if !GRPC
#error(
    "ScopedGRPC needs the Scoped package's \"GRPC\" trait: .package(url: …, from: …, traits: [\"GRPC\"])"
)
#endif
