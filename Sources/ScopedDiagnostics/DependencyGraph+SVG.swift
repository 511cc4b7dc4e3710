extension DependencyGraph {
    /// The graph as an SVG picture a browser shows as it is: readers to the left of what they
    /// read, app services as boxes, scope services as rounded boxes, refused reads as red dashed
    /// edges labelled with the reason.
    ///
    /// Each service stands in a column by the longest chain of reads below it (a service that
    /// reads nothing is in the rightmost column), sorted by name within it; no layout tool is
    /// needed, so `curl …/debug/graph?format=svg > graph.svg` works on any machine.
    public var svg: String {
        let layout = SVGLayout(self)
        var lines = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(layout.width)\" height=\"\(layout.height)\""
                + " viewBox=\"0 0 \(layout.width) \(layout.height)\" font-family=\"Helvetica, Arial, sans-serif\""
                + " font-size=\"13\">",
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\""
                + " markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
        ]
        for edge in edges {
            guard let from = layout.boxes[edge.from], let to = layout.boxes[edge.to] else { continue }
            let (x1, y1, x2, y2) = (
                from.x + from.width, from.y + SVGLayout.boxHeight / 2, to.x, to.y + SVGLayout.boxHeight / 2
            )
            let bend = max(40, abs(x2 - x1) / 2)
            let style = edge.refused == nil ? "stroke=\"#333\"" : "stroke=\"#c00\" stroke-dasharray=\"6 4\""
            lines.append(
                "<path d=\"M \(x1) \(y1) C \(x1 + bend) \(y1), \(x2 - bend) \(y2), \(x2) \(y2)\" fill=\"none\" \(style)"
                    + " marker-end=\"url(#arrow)\"/>"
            )
            if let refusal = edge.refused {
                lines.append(
                    "<text x=\"\((x1 + x2) / 2)\" y=\"\((y1 + y2) / 2 - 6)\" fill=\"#c00\" text-anchor=\"middle\">"
                        + "\(Self.label(refusal))</text>"
                )
            }
        }
        for service in services {
            guard let box = layout.boxes[service.name] else { continue }
            let radius = service.lifetime == .app ? 0 : SVGLayout.boxHeight / 2
            lines.append(
                "<rect x=\"\(box.x)\" y=\"\(box.y)\" width=\"\(box.width)\" height=\"\(SVGLayout.boxHeight)\""
                    + " rx=\"\(radius)\" fill=\"#f4f6fa\" stroke=\"#333\"/>"
            )
            let name = Self.escaped(service.name)
            lines.append(
                "<text x=\"\(box.x + box.width / 2)\" y=\"\(box.y + 19)\" text-anchor=\"middle\">\(name)</text>"
            )
            lines.append(
                "<text x=\"\(box.x + box.width / 2)\" y=\"\(box.y + 36)\" text-anchor=\"middle\" fill=\"#555\""
                    + " font-size=\"11\">(\(service.lifetime))</text>"
            )
        }
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    static func label(_ refusal: Refusal) -> String {
        switch refusal {
        case .cycle: "cycle"
        case .captiveDependency: "captive dependency"
        }
    }

    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
            .replacing("\"", with: "&quot;")
    }
}

/// Where each service of a ``DependencyGraph`` stands in its SVG picture.
private struct SVGLayout {
    static let boxHeight = 46
    static let columnGap = 90
    static let rowGap = 24
    static let margin = 20

    var boxes: [String: (x: Int, y: Int, width: Int)] = [:]
    var width = 0
    var height = 0

    init(_ graph: DependencyGraph) {
        // A service's column: the longest chain of reads below it; a cycle's reads count once.
        let names = Set(graph.services.map(\.name))
        var reads: [String: [String]] = [:]
        for edge in graph.edges where names.contains(edge.to) { reads[edge.from, default: []].append(edge.to) }
        var depth: [String: Int] = [:]
        func depthOf(_ name: String, visiting: Set<String>) -> Int {
            if let known = depth[name] { return known }
            var visiting = visiting
            visiting.insert(name)
            let below = (reads[name] ?? []).filter { !visiting.contains($0) }.map { depthOf($0, visiting: visiting) }
            let found = (below.max() ?? -1) + 1
            depth[name] = found
            return found
        }
        for name in names { _ = depthOf(name, visiting: []) }
        let deepest = depth.values.max() ?? 0
        var columns = Array(repeating: [String](), count: deepest + 1)
        for name in names.sorted() { columns[deepest - depth[name, default: 0]].append(name) }

        var x = Self.margin
        var tallest = 0
        for column in columns {
            let columnWidth = (column.map { max($0.count * 8 + 24, 110) }.max() ?? 110)
            for (row, name) in column.enumerated() {
                boxes[name] = (x, Self.margin + row * (Self.boxHeight + Self.rowGap), columnWidth)
            }
            tallest = max(tallest, column.count)
            x += columnWidth + Self.columnGap
        }
        width = x - Self.columnGap + Self.margin
        height = 2 * Self.margin + max(tallest, 1) * (Self.boxHeight + Self.rowGap) - Self.rowGap
    }
}
