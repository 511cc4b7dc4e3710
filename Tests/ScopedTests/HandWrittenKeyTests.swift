@testable import Scoped
import ScopedDiagnostics
import Testing

private struct ThemeColorKey: ScopedKey {
    static let defaultValue = "blue"
}

private struct URLPrefixKey: ScopedKey {
    static let defaultValue = "/"
}

extension ScopedValues {
    fileprivate var themeColor: String {
        get { self[ThemeColorKey.self] }
        set { self[ThemeColorKey.self] = newValue }
    }

    fileprivate var urlPrefix: String {
        get { self[URLPrefixKey.self] }
        set { self[URLPrefixKey.self] = newValue }
    }
}

/// A key written by hand is as good as an `@Entry`: the spelling for packages built without the
/// `Macros` trait, and the one the library's own modules use.
struct HandWrittenKeyTests {
    @Test func aHandWrittenKeyIsNamedAsTheEntryItDeclares() {
        #expect(ThemeColorKey.name == "themeColor")
        #expect(URLPrefixKey.name == "urlPrefix")
        let names = withScopedValues({
            $0.themeColor = "red"
            $0.urlPrefix = "/v2"
        }) { ScopedValues.current.describe().entries.map(\.name) }
        #expect(names.contains("themeColor"))
        #expect(names.contains("urlPrefix"))
    }

    @Test(arguments: [
        ("ThemeKey", "theme"), ("RequestIDKey", "requestID"), ("URLSessionKey", "urlSession"), ("IDKey", "id"),
        ("Key", "key"), ("__Key_movieRepository", "movieRepository"), ("SQLiteSessionKey", "sqLiteSession"),
    ])
    func aKeysTypeNameBecomesItsEntrysName(typeName: String, name: String) {
        #expect(KeyNames.entryName(fromTypeName: typeName) == name)
    }

    /// The library's own entries are written by hand (so that it builds without the macro) and
    /// keep the names configuration and diagnostics have always used.
    @Test func theLibrarysOwnEntriesKeepTheirNames() {
        let names = withScopedValues({ $0.requestID = "r-1" }) { ScopedValues.current.describe().entries.map(\.name) }
        #expect(names.contains("requestID"))
    }
}
