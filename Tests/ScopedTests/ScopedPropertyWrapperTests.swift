@testable import Scoped
import Testing

/// A controller built once, outside any request, as a server builds its routes at start-up.
private struct TitleController: Sendable {
    @Scoped(\.titles) var titles
    @Scoped(\.requestID) var requestID
    @Scoped(\.theme.cornerRadius) var cornerRadius

    func describe(id: Int) -> String { "\(requestID ?? "-"): \(titles.title(id: id) ?? "none")" }
}

private struct LibraryReader: Sendable {
    @Scoped(Library.self) var library
    @Scoped(Library.self) var optionalLibrary: Library?
}

/// The object's read is optional whether the property names its type or not: no spelling of
/// `@Scoped(T.self)` can stop the process when no scope set the object.
private func objectReadsAreOptional(_ reader: LibraryReader) -> (Library?, Library?) {
    (reader.library, reader.optionalLibrary)
}

struct ScopedPropertyWrapperTests {
    @Test func readsResolveAtAccessTime() {
        let controller = TitleController()
        #expect(controller.describe(id: 1) == "-: production 1")
        withScopedValues({
            $0.requestID = "r-42"
            $0.titles = MockTitles(titles: [1: "Toy Story"])
        }) {
            #expect(controller.describe(id: 1) == "r-42: Toy Story")
        }
        #expect(controller.describe(id: 1) == "-: production 1")
    }

    @Test func chainedKeyPathReadsInsideAnEntry() {
        let controller = TitleController()
        #expect(controller.cornerRadius == 4)
        withScopedValues({ $0.theme.cornerRadius = 12 }) {
            #expect(controller.cornerRadius == 12)
            #expect(ScopedValues.current.theme.accent == "blue")
        }
    }

    @Test func typeKeyedObjectIsReadByItsType() {
        let library = Library(name: "Central")
        withScopedValues({ $0.set(library) }) {
            let reader = LibraryReader()
            #expect(reader.library === library)
            #expect(reader.optionalLibrary === library)
            #expect(objectReadsAreOptional(reader).0 === library)
        }
    }

    @Test func optionalTypeKeyedObjectReadsNilWhenAbsent() {
        #expect(LibraryReader().optionalLibrary == nil)
        #expect(LibraryReader().library == nil)
    }

    @Test func requireThrowsAnErrorNamingTheTypeAndTheFix() throws {
        let error = try #require(throws: ScopedError.self) {
            try ScopedValues.current.require(Library.self)
        }
        #expect(error == .missingObject(type: String(reflecting: Library.self)))
        #expect(error.description.contains("Library"))
        #expect(error.description.contains("$0.set("))
    }

    @Test func requireReturnsTheObjectWhenSet() throws {
        let library = Library(name: "Branch")
        let found = try withScopedValues({ $0.set(library) }) { try ScopedValues.current.require(Library.self) }
        #expect(found === library)
    }

    @Test func nearestTypeKeyedObjectWins() {
        withScopedValues({ $0.set(Library(name: "outer")) }) {
            withScopedValues({ $0.set(Library(name: "inner")) }) {
                #expect(LibraryReader().library?.name == "inner")
            }
            #expect(LibraryReader().library?.name == "outer")
        }
    }
}
