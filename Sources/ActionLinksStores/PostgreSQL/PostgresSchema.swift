import ActionLinksDomain
import PostgresNIO

// The PostgreSQL schema, every version of it in order (v1…vN), and the code that applies them.
// `SQLiteSchema.swift` is the same schema in SQLite's dialect; `SchemaTests` compares the two
// column by column.

extension PostgresStore {
    // MARK: - Migrations

    /// Brings the schema up to date. Several instances starting together migrate once: each takes
    /// the same transaction-scoped advisory lock, so the first applies what is missing and the others
    /// then find nothing to do. Each migration is applied with its version row in that transaction.
    public func migrate() async throws {
        let applied = try await transaction(retryOn: [], bounded: false) { connection in
            // No statement_timeout here: the others wait for the lock while the first migrates, which
            // may take longer on a loaded database (a lock wait cut at 10 s was seen, under a
            // loaded test run, to fail the instance's next statement with 25P02).
            try await connection.query("SET LOCAL statement_timeout = 0", logger: self.logger)
            // The lock's row is read: an error that comes after the row description (a lock wait
            // cancelled) is reported by the rows, not by query() itself.
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger).collect()
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS actionlinks_migrations (
                    version TEXT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """, logger: self.logger)
            var done = Set<String>()
            for try await version in try await connection.query("SELECT version FROM actionlinks_migrations", logger: self.logger).decode(
                String.self)
            {
                done.insert(version)
            }
            var applied: [String] = []
            for migration in Self.migrations where !done.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query(
                    "INSERT INTO actionlinks_migrations (version) VALUES (\(migration.version))", logger: self.logger)
                applied.append(migration.version)
            }
            return applied
        }
        for version in applied { logger.notice("applied store migration", metadata: ["version": "\(version)"]) }
    }

    /// The advisory lock key migrations hold ("actionlk" in ASCII).
    static let migrationLock: Int64 = 0x6163_7469_6f6e_6c6b

    /// Named, versioned schema changes, in order; never edit one that has shipped, add the next.
    /// Times are milliseconds since 1970 (`BIGINT`), as in the SQLite store.
    static let migrations: [(version: String, statements: [String])] = [
        (
            "v1: codes, accounts, refresh tokens, event counts",
            [
                """
                CREATE TABLE codes (
                    hash BYTEA PRIMARY KEY,
                    mode TEXT NOT NULL,
                    tenant_id TEXT NOT NULL,
                    account_id TEXT,
                    email TEXT NOT NULL,
                    new_email TEXT,
                    continue_url TEXT,
                    language_code TEXT,
                    app_settings TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT,
                    consumed_by TEXT,
                    retired_at BIGINT
                )
                """,
                // One live code per (tenant, address, mode), enforced by the database itself: two
                // instances issuing for the same address at once cannot both leave a live code.
                "CREATE UNIQUE INDEX codes_one_live ON codes (tenant_id, email, mode) WHERE consumed_at IS NULL AND retired_at IS NULL",
                // Issuing: one call per code. The advisory lock makes issues for one address take
                // turns across instances; each statement after it sees what the previous holder
                // committed (READ COMMITTED takes a new snapshot per statement in a volatile function).
                """
                CREATE FUNCTION actionlinks_issue_code(
                    p_hash BYTEA, p_mode TEXT, p_tenant_id TEXT, p_account_id TEXT, p_email TEXT, p_new_email TEXT,
                    p_continue_url TEXT, p_language_code TEXT, p_app_settings TEXT, p_created_at BIGINT, p_expires_at BIGINT
                ) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
                BEGIN
                    PERFORM pg_advisory_xact_lock(hashtextextended(p_tenant_id || chr(31) || p_email || chr(31) || p_mode, 0));
                    UPDATE codes SET retired_at = p_created_at
                    WHERE tenant_id = p_tenant_id AND email = p_email AND mode = p_mode AND consumed_at IS NULL AND retired_at IS NULL;
                    INSERT INTO codes (hash, mode, tenant_id, account_id, email, new_email, continue_url, language_code, app_settings,
                                       created_at, expires_at)
                    VALUES (p_hash, p_mode, p_tenant_id, p_account_id, p_email, p_new_email, p_continue_url, p_language_code,
                            p_app_settings, p_created_at, p_expires_at);
                END
                $$
                """,
                "CREATE INDEX codes_expiry ON codes (expires_at)",
                "CREATE INDEX codes_consumed ON codes (consumed_at) WHERE consumed_at IS NOT NULL",
                "CREATE INDEX codes_retired ON codes (retired_at) WHERE retired_at IS NOT NULL",
                """
                CREATE TABLE accounts (
                    local_id TEXT NOT NULL,
                    tenant_id TEXT NOT NULL,
                    email TEXT,
                    email_verified BOOLEAN NOT NULL DEFAULT false,
                    password_hash TEXT,
                    password_updated_at BIGINT,
                    display_name TEXT,
                    disabled BOOLEAN NOT NULL DEFAULT false,
                    created_at BIGINT NOT NULL,
                    last_login_at BIGINT,
                    valid_since BIGINT NOT NULL DEFAULT 0,
                    PRIMARY KEY (tenant_id, local_id)
                )
                """,
                "CREATE UNIQUE INDEX accounts_email ON accounts (tenant_id, email) WHERE email IS NOT NULL",
                """
                CREATE TABLE refresh_tokens (
                    hash BYTEA PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    account_id TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX refresh_tokens_account ON refresh_tokens (tenant_id, account_id)",
                """
                CREATE TABLE event_counts (
                    key TEXT NOT NULL,
                    window_start BIGINT NOT NULL,
                    count INTEGER NOT NULL,
                    PRIMARY KEY (key, window_start)
                )
                """,
            ]
        ),
        (
            "v2: every user field, federated identities, sessions that remember how they signed in, tenants",
            [
                """
                ALTER TABLE accounts ADD COLUMN photo_url TEXT, ADD COLUMN phone_number TEXT, ADD COLUMN last_refresh_at BIGINT,
                    ADD COLUMN custom_attributes TEXT, ADD COLUMN initial_email TEXT,
                    ADD COLUMN email_link_signin BOOLEAN NOT NULL DEFAULT false, ADD COLUMN custom_auth BOOLEAN NOT NULL DEFAULT false
                """,
                "CREATE UNIQUE INDEX accounts_phone ON accounts (tenant_id, phone_number) WHERE phone_number IS NOT NULL",
                """
                CREATE TABLE account_providers (
                    tenant_id TEXT NOT NULL,
                    provider_id TEXT NOT NULL,
                    raw_id TEXT NOT NULL,
                    local_id TEXT NOT NULL,
                    email TEXT,
                    display_name TEXT,
                    photo_url TEXT,
                    CONSTRAINT account_providers_pkey PRIMARY KEY (tenant_id, provider_id, raw_id)
                )
                """,
                "CREATE INDEX account_providers_account ON account_providers (tenant_id, local_id)",
                "CREATE INDEX account_providers_email ON account_providers (tenant_id, email) WHERE email IS NOT NULL",
                """
                ALTER TABLE refresh_tokens ADD COLUMN sign_in_provider TEXT NOT NULL DEFAULT 'password',
                    ADD COLUMN auth_time BIGINT NOT NULL DEFAULT 0, ADD COLUMN claims TEXT
                """,
                """
                CREATE TABLE tenants (
                    tenant_id TEXT PRIMARY KEY,
                    settings TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
            ]
        ),
        (
            "v3: federated sign-in flows",
            [
                """
                CREATE TABLE federated_flows (
                    state_hash TEXT PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    returned_at BIGINT,
                    code_hash TEXT,
                    consumed_at BIGINT,
                    details TEXT NOT NULL
                )
                """,
                "CREATE INDEX federated_flows_expiry ON federated_flows (expires_at)",
            ]
        ),
        (
            "v4: the sessions of deleted accounts",
            [
                """
                CREATE TABLE deleted_sessions (
                    hash BYTEA PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    deleted_at BIGINT NOT NULL
                )
                """
            ]
        ),
        (
            "v5: used SAML assertions",
            [
                "CREATE TABLE saml_assertions (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
                "CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at)",
            ]
        ),
        (
            "v6: screen names",
            [
                "ALTER TABLE accounts ADD COLUMN screen_name TEXT",
                "ALTER TABLE account_providers ADD COLUMN screen_name TEXT",
            ]
        ),
        (
            // (SQLite has no v7: this is a function, not a table, and SchemaTests compares tables.)
            "v7: email-link sign-in in one statement",
            [
                // What ``ActionCompleter/signIn`` does with a code and no signed-in user, in one
                // statement (one round trip, atomic): lock the code; refuse, changing nothing, a code
                // that is not live, not of this tenant or mode, or not sent to this address, and an
                // owner that is disabled or missing when sign-up is off; else lock or create the
                // account (an unverified one loses its password, providers and sessions), consume the
                // code and add the session. `o_status` says which; the row types follow the tables,
                // so a column added later is returned too.
                """
                CREATE FUNCTION actionlinks_email_link_sign_in(
                    p_hashes BYTEA[], p_tenant_id TEXT, p_mode TEXT, p_email TEXT, p_now BIGINT, p_consumer TEXT, p_new_id TEXT,
                    p_can_create BOOLEAN, p_session_hash BYTEA, p_sign_in_provider TEXT, p_auth_time BIGINT, p_claims TEXT
                ) RETURNS TABLE (o_status TEXT, o_is_new BOOLEAN, o_identities TEXT, o_code codes, o_account accounts)
                LANGUAGE plpgsql VOLATILE AS $$
                BEGIN
                    o_is_new := false;
                    SELECT c.* INTO o_code FROM codes c WHERE c.hash = ANY(p_hashes)
                    ORDER BY array_position(p_hashes, c.hash) LIMIT 1 FOR UPDATE;
                    IF NOT FOUND OR o_code.consumed_at IS NOT NULL OR o_code.retired_at IS NOT NULL THEN
                        o_status := 'invalid';
                    ELSIF o_code.expires_at <= p_now THEN
                        o_status := 'expired';
                    ELSIF o_code.tenant_id <> p_tenant_id THEN
                        o_status := 'invalid';
                    ELSIF o_code.mode <> p_mode THEN
                        o_status := 'wrong_mode';
                    ELSIF o_code.email <> p_email THEN
                        o_status := 'email_mismatch';
                    END IF;
                    IF o_status IS NOT NULL THEN
                        RETURN NEXT;
                        RETURN;
                    END IF;
                    SELECT a.* INTO o_account FROM accounts a WHERE a.tenant_id = p_tenant_id AND a.email = p_email FOR UPDATE;
                    IF FOUND THEN
                        IF o_account.disabled THEN
                            o_status := 'disabled';
                            o_account := NULL;
                            RETURN NEXT;
                            RETURN;
                        END IF;
                        IF NOT o_account.email_verified THEN
                            DELETE FROM account_providers WHERE tenant_id = p_tenant_id AND local_id = o_account.local_id;
                            UPDATE accounts SET password_hash = NULL, password_updated_at = NULL, valid_since = p_now / 1000
                            WHERE tenant_id = p_tenant_id AND local_id = o_account.local_id;
                        ELSE
                            o_identities := (
                                SELECT json_agg(json_build_object('providerID', p.provider_id, 'rawID', p.raw_id, 'email', p.email,
                                                                  'displayName', p.display_name, 'photoURL', p.photo_url,
                                                                  'screenName', p.screen_name)
                                                ORDER BY p.provider_id, p.raw_id)::text
                                FROM account_providers p WHERE p.tenant_id = p_tenant_id AND p.local_id = o_account.local_id);
                        END IF;
                        UPDATE accounts a SET email_verified = true, email_link_signin = true, last_login_at = p_now
                        WHERE a.tenant_id = p_tenant_id AND a.local_id = o_account.local_id
                        RETURNING a.* INTO o_account;
                    ELSIF NOT p_can_create THEN
                        o_status := 'admin_only';
                        RETURN NEXT;
                        RETURN;
                    ELSE
                        INSERT INTO accounts AS a (local_id, tenant_id, email, email_verified, created_at, last_login_at, email_link_signin)
                        VALUES (p_new_id, p_tenant_id, p_email, true, p_now, p_now, true)
                        RETURNING a.* INTO o_account;
                        o_is_new := true;
                    END IF;
                    UPDATE codes SET consumed_at = p_now, consumed_by = p_consumer WHERE hash = o_code.hash;
                    INSERT INTO refresh_tokens (hash, tenant_id, account_id, created_at, sign_in_provider, auth_time, claims)
                    VALUES (p_session_hash, p_tenant_id, o_account.local_id, p_now, p_sign_in_provider, p_auth_time, p_claims);
                    o_status := 'signed_in';
                    RETURN NEXT;
                END
                $$
                """
            ]
        ),
        (
            // (SQLite has no v8 either: a function.)
            "v8: email-link sign-ins in one statement and one commit",
            [
                // Concurrent email-link sign-ins together (``GroupCommit``): element i is
                // `actionlinks_email_link_sign_in` on the i-th value of each array (its code's hashes
                // are the next `p_hash_counts[i]` of `p_hashes`), run in array order in one
                // transaction, so each sees what those before it did (a code consumed by an earlier
                // element is consumed for it). One row per element, with its position. The caller
                // orders the elements by code hash, then address, so that two batches lock codes in
                // one order. An error fails the whole statement (the caller then runs the elements
                // one by one): no subtransaction per element, which would add a subtransaction ID
                // per signed-in element and, past 64 in one transaction, slow every other
                // session's snapshots.
                """
                CREATE FUNCTION actionlinks_email_link_sign_ins(
                    p_hashes BYTEA[], p_hash_counts INT[], p_tenant_ids TEXT[], p_mode TEXT, p_emails TEXT[], p_nows BIGINT[],
                    p_consumers TEXT[], p_new_ids TEXT[], p_can_create BOOLEAN[], p_session_hashes BYTEA[], p_sign_in_providers TEXT[],
                    p_auth_times BIGINT[], p_claims TEXT[]
                ) RETURNS TABLE (o_status TEXT, o_is_new BOOLEAN, o_identities TEXT, o_code codes, o_account accounts, o_position INT)
                LANGUAGE plpgsql VOLATILE AS $$
                DECLARE
                    v_first INT := 1;
                BEGIN
                    FOR i IN 1 .. coalesce(array_length(p_emails, 1), 0) LOOP
                        RETURN QUERY
                            SELECT r.o_status, r.o_is_new, r.o_identities, r.o_code, r.o_account, i
                            FROM actionlinks_email_link_sign_in(
                                p_hashes[v_first : v_first + p_hash_counts[i] - 1], p_tenant_ids[i], p_mode, p_emails[i], p_nows[i],
                                p_consumers[i], p_new_ids[i], p_can_create[i], p_session_hashes[i], p_sign_in_providers[i],
                                p_auth_times[i], p_claims[i]) AS r;
                        v_first := v_first + p_hash_counts[i];
                    END LOOP;
                END
                $$
                """
            ]
        ),
        (
            "v9: sign-in codes",
            [
                // One live sign-in code per (tenant, address): a MAC of the code and the link sealed
                // under a key derived from the code (``SignInCodeStore``), never either in clear.
                """
                CREATE TABLE sign_in_codes (
                    tenant_id TEXT NOT NULL,
                    email TEXT NOT NULL,
                    mac BYTEA NOT NULL,
                    sealed_link BYTEA NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    used_at BIGINT,
                    PRIMARY KEY (tenant_id, email)
                )
                """,
                "CREATE INDEX sign_in_codes_expiry ON sign_in_codes (expires_at)",
            ]
        ),
        (
            // Each purge deletes by an OR of times: with an index for every term the planner reads
            // only the rows that go (v1 indexed the codes' three). The event counts are keyed by
            // their window first, as in SQLite: the purge's range is the key's own.
            "v10: an index for each condition of a purge",
            [
                "ALTER TABLE event_counts DROP CONSTRAINT event_counts_pkey, ADD PRIMARY KEY (window_start, key)",
                "CREATE INDEX sign_in_codes_used ON sign_in_codes (used_at) WHERE used_at IS NOT NULL",
            ]
        ),
        (
            // As SQLite's v12: a sign-in code dies in the write that consumes, retires or deletes its
            // link's code, whatever path wrote it. The triggers are per row and AFTER: a batch of
            // issues or sign-ins deletes each dead code's row as it goes, under the locks it already
            // holds on that code.
            "v12: a sign-in code dies with its link",
            [
                "ALTER TABLE sign_in_codes ADD COLUMN link_hash BYTEA",
                "CREATE INDEX sign_in_codes_link ON sign_in_codes (link_hash) WHERE link_hash IS NOT NULL",
                """
                CREATE FUNCTION actionlinks_end_sign_in_code() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    DELETE FROM sign_in_codes WHERE link_hash = OLD.hash;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER codes_end_sign_in_code AFTER UPDATE OF consumed_at, retired_at ON codes FOR EACH ROW
                    WHEN (NEW.mode = 'signIn' AND (NEW.consumed_at IS NOT NULL OR NEW.retired_at IS NOT NULL))
                    EXECUTE FUNCTION actionlinks_end_sign_in_code()
                """,
                """
                CREATE TRIGGER codes_deleted_end_sign_in_code AFTER DELETE ON codes FOR EACH ROW WHEN (OLD.mode = 'signIn')
                    EXECUTE FUNCTION actionlinks_end_sign_in_code()
                """,
            ]
        ),
        (
            // As SQLite's v13: a mail waits here from the write that made it until one instance has
            // delivered it or given it up; the claim reads only due mails, through the index.
            "v13: the mail outbox",
            [
                """
                CREATE TABLE mail_outbox (
                    id TEXT PRIMARY KEY,
                    sealed BYTEA NOT NULL,
                    code_hash BYTEA,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    due_at BIGINT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    leased_until BIGINT,
                    leased_by TEXT
                )
                """,
                "CREATE INDEX mail_outbox_due ON mail_outbox (due_at)",
            ]
        ),
        (
            // As SQLite's v14: an account's second factors as one JSON array, NULL for none. The
            // email-link functions (v7, v8) return `accounts` rows whole: they return it too.
            "v14: second factors",
            ["ALTER TABLE accounts ADD COLUMN mfa TEXT"]
        ),
        (
            // As SQLite's v15: the write that raises an account's `valid_since` moves the sessions
            // it revokes into `revoked_sessions` (a per-row AFTER trigger, under the account's row
            // lock that write holds), so `refresh_tokens` holds only sessions that can refresh;
            // the tombstones go after 30 days, through their time's index.
            "v15: revoked sessions leave only their hash, and tombstones go after 30 days",
            [
                """
                CREATE TABLE revoked_sessions (
                    hash BYTEA PRIMARY KEY,
                    tenant_id TEXT NOT NULL,
                    account_id TEXT NOT NULL,
                    revoked_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX revoked_sessions_account ON revoked_sessions (tenant_id, account_id)",
                "CREATE INDEX revoked_sessions_age ON revoked_sessions (revoked_at)",
                "CREATE INDEX deleted_sessions_age ON deleted_sessions (deleted_at)",
                """
                CREATE FUNCTION actionlinks_revoke_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    WITH gone AS (
                        DELETE FROM refresh_tokens
                        WHERE tenant_id = NEW.tenant_id AND account_id = NEW.local_id AND created_at < NEW.valid_since * 1000
                        RETURNING hash, tenant_id, account_id
                    )
                    INSERT INTO revoked_sessions (hash, tenant_id, account_id, revoked_at)
                    SELECT hash, tenant_id, account_id, NEW.valid_since * 1000 FROM gone
                    ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER accounts_revoke_sessions AFTER UPDATE OF valid_since ON accounts FOR EACH ROW
                    WHEN (NEW.valid_since > OLD.valid_since)
                    EXECUTE FUNCTION actionlinks_revoke_sessions()
                """,
                """
                WITH gone AS (
                    DELETE FROM refresh_tokens r USING accounts a
                    WHERE a.tenant_id = r.tenant_id AND a.local_id = r.account_id AND r.created_at < a.valid_since * 1000
                    RETURNING r.hash, r.tenant_id, r.account_id, a.valid_since * 1000 AS revoked_at
                )
                INSERT INTO revoked_sessions (hash, tenant_id, account_id, revoked_at)
                SELECT hash, tenant_id, account_id, revoked_at FROM gone
                ON CONFLICT DO NOTHING
                """,
            ]
        ),
    ]
}
