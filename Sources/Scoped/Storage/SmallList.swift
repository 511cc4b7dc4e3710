/// A list that keeps its first element inline and only the rest in an array.
///
/// A request scope builds one service far more often than two, and an array allocates for its
/// first element: this list allocates only for the second.
struct SmallList<Element>: RandomAccessCollection, MutableCollection {
    private var head: Element?
    private var tail: [Element] = []

    /// An empty list.
    init() {}

    /// A list of `elements`, in order.
    init(_ elements: some Sequence<Element>) {
        for element in elements { append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    subscript(position: Int) -> Element {
        get { position == 0 ? head! : tail[position - 1] }
        set {
            if position == 0 { head = newValue } else { tail[position - 1] = newValue }
        }
    }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if head == nil { head = element } else { tail.append(element) }
    }

    /// Removes the element at `position`, keeping the others in order.
    mutating func remove(at position: Int) {
        if position == 0 {
            head = tail.isEmpty ? nil : tail.removeFirst()
        } else {
            tail.remove(at: position - 1)
        }
    }
}
