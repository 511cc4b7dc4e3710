/// How many tenants a root has open, and how many it has evicted since it was created.
public struct TenantStatistics: Hashable, Sendable, Codable {
    /// Tenants open now; evicted ones whose services are still closing are not counted.
    public var open: Int
    /// Tenants evicted since the root was created, for being idle or to make room.
    public var evicted: Int

    /// Statistics with the counts given.
    public init(open: Int, evicted: Int) {
        self.open = open
        self.evicted = evicted
    }
}
