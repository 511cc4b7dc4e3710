import Foundation
import Logging
import PostgresNIO

/// The JSON type a setting kept in PostgreSQL must have: what `scoped_set_setting` checks before
/// it writes, so that an operator's wrongly typed value is refused by the statement itself.
public enum PostgresSettingType: String, Sendable, Hashable, CaseIterable {
    /// A JSON string: `'"debug"'`.
    case string
    /// A JSON number with no fraction: `'20'`.
    case integer
    /// Any JSON number: `'2.5'`.
    case number
    /// `'true'` or `'false'`.
    case boolean
    /// A JSON array of strings: `'["a", "b"]'`.
    case stringArray = "string array"
}

/// The tables and functions settings are kept in, created by the provider when it first loads
/// (idempotently, under an advisory lock, so instances that start together create them once).
enum PostgresSettingsSchema {
    /// The channel every change is notified on, with the new version as its payload.
    static let channel = "scoped_settings"

    /// The advisory lock the schema is created under: a constant of its own (the migrations'
    /// lock is `PostgresMigrator.lockKey`).
    static let lockKey: Int64 = 0x5C0_9ED_5E77

    /// The statements that create the schema; each can run again.
    static let statements: [String] = [
        // The keys an application accepts from the database, with their types: what the
        // functions check. An application registers its own at each start.
        """
        CREATE TABLE IF NOT EXISTS scoped_setting_keys (
            key text PRIMARY KEY,
            type text NOT NULL CHECK (type IN ('string', 'integer', 'number', 'boolean', 'string array'))
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS scoped_settings (
            key text PRIMARY KEY REFERENCES scoped_setting_keys (key) ON DELETE CASCADE,
            value jsonb NOT NULL
        )
        """,
        // One row: the version every change increments. Its row lock orders concurrent changes,
        // so versions commit in the order they are numbered.
        """
        CREATE TABLE IF NOT EXISTS scoped_settings_version (
            single boolean PRIMARY KEY DEFAULT true CHECK (single),
            version bigint NOT NULL
        )
        """,
        "INSERT INTO scoped_settings_version (version) VALUES (0) ON CONFLICT DO NOTHING",
        // Increments the version and notifies it; the notification is sent when the
        // transaction commits, and never if it rolls back.
        """
        CREATE OR REPLACE FUNCTION scoped_settings_changed() RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            changed bigint;
        BEGIN
            UPDATE scoped_settings_version SET version = version + 1 RETURNING version INTO changed;
            PERFORM pg_notify('\(channel)', changed::text);
            RETURN changed;
        END
        $$
        """,
        // `setting_value` checked against the type its key has in `scoped_setting_keys`.
        """
        CREATE OR REPLACE FUNCTION scoped_setting_value(setting_key text, setting_value text)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            expected text;
        BEGIN
            SELECT type INTO expected FROM scoped_setting_keys WHERE key = setting_key;
            IF expected IS NULL THEN
                RAISE EXCEPTION 'unknown setting key "%"', setting_key
                    USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'known keys: ' || coalesce(
                        (SELECT string_agg(key, ', ' ORDER BY key) FROM scoped_setting_keys), 'none');
            END IF;
            RETURN scoped_checked_value(setting_key, expected, setting_value);
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_set_setting(setting_key text, setting_value text)
        RETURNS bigint LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO scoped_settings (key, value)
                VALUES (setting_key, scoped_setting_value(setting_key, setting_value))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value;
            RETURN scoped_settings_changed();
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_unset_setting(setting_key text) RETURNS bigint LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM scoped_setting_keys WHERE key = setting_key) THEN
                RAISE EXCEPTION 'unknown setting key "%"', setting_key
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            DELETE FROM scoped_settings WHERE key = setting_key;
            RETURN scoped_settings_changed();
        END
        $$
        """,
    ]

    /// The channel every change of a tenant is notified on, with the new version as its payload.
    static let tenantsChannel = "scoped_tenants"

    /// The statements that create the tenant registry; each can run again.
    static let tenantStatements: [String] = [
        """
        CREATE TABLE IF NOT EXISTS scoped_tenant_setting_keys (
            key text PRIMARY KEY,
            type text NOT NULL CHECK (type IN ('string', 'integer', 'number', 'boolean', 'string array'))
        )
        """,
        // Each tenant's state and settings, stamped with the version that changed it last.
        """
        CREATE TABLE IF NOT EXISTS scoped_tenants (
            id text PRIMARY KEY CHECK (id ~ '^[a-z0-9-]{1,63}$'),
            state text NOT NULL CHECK (state IN ('active', 'suspended', 'deleted')),
            settings jsonb NOT NULL DEFAULT '{}',
            version bigint NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS scoped_tenants_version (
            single boolean PRIMARY KEY DEFAULT true CHECK (single),
            version bigint NOT NULL
        )
        """,
        "INSERT INTO scoped_tenants_version (version) VALUES (0) ON CONFLICT DO NOTHING",
        // Increments the version, stamps the tenant with it, and notifies it at commit.
        """
        CREATE OR REPLACE FUNCTION scoped_tenant_changed(tenant_id text) RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            changed bigint;
        BEGIN
            UPDATE scoped_tenants_version SET version = version + 1 RETURNING version INTO changed;
            UPDATE scoped_tenants SET version = changed WHERE id = tenant_id;
            PERFORM pg_notify('\(tenantsChannel)', changed::text);
            RETURN changed;
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_checked_tenant(tenant_id text, must_exist boolean) RETURNS void
        LANGUAGE plpgsql AS $$
        BEGIN
            IF tenant_id IS NULL OR tenant_id !~ '^[a-z0-9-]{1,63}$' THEN
                RAISE EXCEPTION 'invalid tenant ID "%": 1 to 63 characters from a-z, 0-9 and -', tenant_id
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF must_exist AND NOT EXISTS (SELECT 1 FROM scoped_tenants WHERE id = tenant_id) THEN
                RAISE EXCEPTION 'unknown tenant "%"', tenant_id
                    USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'a tenant is created with scoped_set_tenant_state(''<id>'', ''active'')';
            END IF;
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_set_tenant_state(tenant_id text, tenant_state text) RETURNS bigint
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM scoped_checked_tenant(tenant_id, false);
            IF tenant_state IS NULL OR tenant_state NOT IN ('active', 'suspended', 'deleted') THEN
                RAISE EXCEPTION 'invalid tenant state "%": active, suspended or deleted', tenant_state
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            INSERT INTO scoped_tenants (id, state, version) VALUES (tenant_id, tenant_state, 0)
                ON CONFLICT (id) DO UPDATE SET state = excluded.state;
            RETURN scoped_tenant_changed(tenant_id);
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_set_tenant_setting(tenant_id text, setting_key text, setting_value text)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            expected text;
        BEGIN
            PERFORM scoped_checked_tenant(tenant_id, true);
            SELECT type INTO expected FROM scoped_tenant_setting_keys WHERE key = setting_key;
            IF expected IS NULL THEN
                RAISE EXCEPTION 'unknown tenant setting key "%"', setting_key
                    USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'known keys: ' || coalesce(
                        (SELECT string_agg(key, ', ' ORDER BY key) FROM scoped_tenant_setting_keys), 'none');
            END IF;
            UPDATE scoped_tenants
                SET settings = settings || jsonb_build_object(
                    setting_key, scoped_checked_value(setting_key, expected, setting_value))
                WHERE id = tenant_id;
            RETURN scoped_tenant_changed(tenant_id);
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION scoped_unset_tenant_setting(tenant_id text, setting_key text)
        RETURNS bigint LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM scoped_checked_tenant(tenant_id, true);
            UPDATE scoped_tenants SET settings = settings - setting_key WHERE id = tenant_id;
            RETURN scoped_tenant_changed(tenant_id);
        END
        $$
        """,
    ]

    /// The one statement that reads what changed after a version: the current version, and
    /// each tenant changed since, seen in one snapshot (one row of `NULL`s when none changed).
    static let readTenants =
        "SELECT v.version, t.id, t.state, t.settings::text FROM scoped_tenants_version v "
        + "LEFT JOIN scoped_tenants t ON t.version > $1"

    /// The function both the settings and the tenants' settings check a value with: the value
    /// parsed and checked against its key's type, or an error naming the key.
    static let valueChecks: [String] = [
        """
        CREATE OR REPLACE FUNCTION scoped_checked_value(setting_key text, expected text, setting_value text)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            parsed jsonb;
            matches boolean;
        BEGIN
            BEGIN
                parsed := setting_value::jsonb;
            EXCEPTION WHEN invalid_text_representation THEN
                RAISE EXCEPTION 'setting "%": % is not a JSON value', setting_key, setting_value
                    USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'a string is quoted in JSON: ''"debug"''';
            END;
            -- (Assigned first: plpgsql's IF would end its condition at the CASE's first THEN.)
            matches := CASE expected
                WHEN 'string' THEN jsonb_typeof(parsed) = 'string'
                WHEN 'number' THEN jsonb_typeof(parsed) = 'number'
                WHEN 'integer' THEN jsonb_typeof(parsed) = 'number'
                    AND parsed::numeric = trunc(parsed::numeric)
                WHEN 'boolean' THEN jsonb_typeof(parsed) = 'boolean'
                WHEN 'string array' THEN jsonb_typeof(parsed) = 'array'
                    AND NOT EXISTS (
                        SELECT 1 FROM jsonb_array_elements(parsed) AS element
                        WHERE jsonb_typeof(element) <> 'string')
                ELSE false
            END;
            IF NOT matches THEN
                RAISE EXCEPTION 'setting "%": expected % but got %', setting_key, expected, parsed
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            RETURN parsed;
        END
        $$
        """
    ]

    /// The statement that registers `keys` in `table`, or changes their types.
    static func registering(_ keys: [String: PostgresSettingType], in table: String) -> String? {
        guard !keys.isEmpty else { return nil }
        let rows = keys.sorted { $0.key < $1.key }.map { "(\(literal($0.key)), \(literal($0.value.rawValue)))" }
        return "INSERT INTO \(table) (key, type) VALUES \(rows.joined(separator: ", ")) "
            + "ON CONFLICT (key) DO UPDATE SET type = excluded.type"
    }

    /// Runs `statements` in one transaction, under the schema's advisory lock: instances that
    /// start together create the schema once, one after the other.
    static func apply(_ statements: [String], on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("BEGIN", logger: logger).collect()
        do {
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger).collect()
            for statement in statements {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect()
            }
            _ = try await connection.query("COMMIT", logger: logger).collect()
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger).collect()
            throw error
        }
    }

    /// The one statement that reads a version whole: the version and every setting, as one JSON
    /// object keyed by the settings' keys, seen in one snapshot.
    static let read =
        "SELECT version, coalesce((SELECT jsonb_object_agg(key, value) FROM scoped_settings), '{}'::jsonb)::text "
        + "FROM scoped_settings_version"

    /// `text` as an SQL string literal.
    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
