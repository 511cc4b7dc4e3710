import MovieCatalog
import Configuration

/// Reads typed values from a `ConfigReader`, telling a missing value from one that is present
/// but invalid, and naming the key and its source in every error.
struct ConfigValues {
    let reader: ConfigReader
    /// The profile's file.
    let file: String
    /// The file named by `CONFIG_FILE`, layered over the profile's, and a reader of it alone.
    var overlay: (file: String, reader: ConfigReader)? = nil
    /// The version of the settings kept in the database, between the environment and the
    /// overlay, and a reader of it alone.
    var settings: (name: String, reader: ConfigReader)? = nil
    let environment: [String: String]

    /// The environment variable that overrides `key`, named as swift-configuration's
    /// environment provider names it: `http.port` → `HTTP_PORT`, `http.idleTimeout` →
    /// `HTTP_IDLE_TIMEOUT`.
    func variable(for key: String) -> String {
        var name = ""
        var previous: Character?
        for character in key {
            if let previous, previous.isLowercase, character.isUppercase { name.append("_") }
            name.append(character.isLetter || character.isNumber ? Character(character.uppercased()) : "_")
            previous = character
        }
        return name
    }

    /// Where `key`'s value comes from: its environment variable when set, else the database's
    /// settings when they have the key, else the overlay file when it has the key, else the
    /// profile's file.
    func source(of key: String) -> String {
        let name = variable(for: key)
        if environment[name] != nil { return "environment variable \(name)" }
        if let settings, Self.isPresent(key, in: settings.reader) { return settings.name }
        if let overlay, Self.isPresent(key, in: overlay.reader) { return overlay.file }
        return file
    }

    func error(_ key: String, _ message: String) -> ConfigurationError {
        ConfigurationError(key: key, source: source(of: key), message: message)
    }

    /// Whether `key` has a value of any type.
    func isPresent(_ key: String) -> Bool {
        Self.isPresent(key, in: reader)
    }

    /// Whether `key` has a value of any type in `reader`.
    private static func isPresent(_ key: String, in reader: ConfigReader) -> Bool {
        let configKey = ConfigKey(key)
        return reader.string(forKey: configKey) != nil || reader.int(forKey: configKey) != nil
            || reader.double(forKey: configKey) != nil || reader.bool(forKey: configKey) != nil
            || reader.stringArray(forKey: configKey) != nil || reader.intArray(forKey: configKey) != nil
    }

    func optionalString(_ key: String) throws -> String? {
        if let value = reader.string(forKey: ConfigKey(key)) { return value }
        if isPresent(key) { throw error(key, "expected a string") }
        return nil
    }

    func string(_ key: String, default defaultValue: String? = nil) throws -> String {
        if let value = try optionalString(key) {
            guard !value.isEmpty else { throw error(key, "must not be empty") }
            return value
        }
        if let defaultValue { return defaultValue }
        throw error(key, "is required")
    }

    func int(_ key: String, default defaultValue: Int? = nil, in range: ClosedRange<Int>) throws -> Int {
        let value: Int
        if let read = reader.int(forKey: ConfigKey(key)) {
            value = read
        } else if isPresent(key) {
            throw error(key, "expected an integer")
        } else if let defaultValue {
            value = defaultValue
        } else {
            throw error(key, "is required")
        }
        guard range.contains(value) else {
            throw error(key, "\(value) is outside \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// A number of seconds within `range`; integers are accepted.
    func seconds(_ key: String, default defaultValue: Double, in range: ClosedRange<Double>) throws -> Double {
        let value: Double
        if let read = reader.double(forKey: ConfigKey(key)) {
            value = read
        } else if let read = reader.int(forKey: ConfigKey(key)) {
            value = Double(read)
        } else if isPresent(key) {
            throw error(key, "expected a number of seconds")
        } else {
            value = defaultValue
        }
        guard range.contains(value) else {
            throw error(key, "\(value) is outside \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        if let value = reader.bool(forKey: ConfigKey(key)) { return value }
        if isPresent(key) { throw error(key, "expected true or false") }
        return defaultValue
    }

    func stringArray(_ key: String) throws -> [String] {
        if let value = reader.stringArray(forKey: ConfigKey(key)) { return value }
        if isPresent(key) { throw error(key, "expected a list of strings") }
        throw error(key, "is required")
    }

    /// A string value converted by `parse`, which returns `nil` for values it does not accept.
    func choice<T>(_ key: String, default defaultValue: T, parse: (String) -> T?) throws -> T {
        guard let text = try optionalString(key) else { return defaultValue }
        guard let value = parse(text) else { throw error(key, "'\(text)' is not an accepted value") }
        return value
    }
}
