public import Foundation

/// The code blocks of documentation articles, and the compiled code that shows them: what keeps
/// every snippet of an article true.
public enum ArticleSnippets {
    /// The repository's root, from a file of one of its test targets.
    public static func repositoryRoot(from filePath: String) -> URL {
        var url = URL(filePath: filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appending(path: "Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }

    /// Every ```swift block of the Markdown file at `path`, relative to the repository root.
    public static func inArticle(_ path: String, from filePath: String = #filePath) throws -> [String] {
        let text = try String(contentsOf: repositoryRoot(from: filePath).appending(path: path), encoding: .utf8)
        return text.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "\n```").first ?? "" }
    }

    /// Every piece of `filePath` between a `// SNIPPET-BEGIN` and a `// SNIPPET-END` line,
    /// dedented by its first line's indentation, as an article shows it.
    public static func marked(in filePath: String = #filePath) throws -> [String] {
        let source = try String(contentsOfFile: filePath, encoding: .utf8)
        return source.components(separatedBy: "// SNIPPET-BEGIN\n").dropFirst()
            .map { part in
                let body = part.components(separatedBy: "// SNIPPET-END").first ?? ""
                let lines = body.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                let indent = lines.first?.prefix { $0 == " " }.count ?? 0
                return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
                    .joined(separator: "\n")
            }
    }
}
