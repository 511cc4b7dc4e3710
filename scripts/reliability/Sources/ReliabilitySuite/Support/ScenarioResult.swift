/// What a scenario measured: one line of figures, and every target it missed.
struct ScenarioResult: Sendable {
    var name: String
    var figures: [String] = []
    var failures: [String] = []

    init(_ name: String) { self.name = name }

    var passed: Bool { failures.isEmpty }

    /// Records `figure` and, when `met` is false, a failure naming the target.
    mutating func check(_ figure: String, target: String, _ met: Bool) {
        figures.append(met ? figure : "\(figure) (target \(target))")
        if !met { failures.append("\(figure); target \(target)") }
    }

    mutating func report(_ figure: String) { figures.append(figure) }
}
