// ScopedPostgres's packages are resolved only with the package's "PostgreSQL" trait.
#if !PostgreSQL
#error(
    "ScopedPostgres needs the Scoped package's \"PostgreSQL\" trait: .package(url: …, from: …, traits: [\"PostgreSQL\"])"
)
#endif
