import Testing

@testable import Scoped

struct SmallListTests {
    @Test func behavesLikeAnArrayThroughAppendsRemovalsAndWrites() {
        var list = SmallList<Int>()
        var array: [Int] = []
        #expect(list.isEmpty)
        // Removing the inline first element must promote the next one; removing from the tail
        // must keep the order.
        let steps: [(append: Int?, remove: Int?)] = [
            (1, nil), (2, nil), (3, nil), (nil, 0), (4, nil), (nil, 1), (nil, 0), (nil, 0), (5, nil), (6, nil),
        ]
        for step in steps {
            if let value = step.append {
                list.append(value)
                array.append(value)
            }
            if let index = step.remove {
                list.remove(at: index)
                array.remove(at: index)
            }
            #expect(Array(list) == array)
        }
        list[1] = 60
        array[1] = 60
        #expect(Array(list) == array)
        #expect(Array(SmallList([7, 8, 9]).filter { $0 != 8 }) == [7, 9])
    }
}
