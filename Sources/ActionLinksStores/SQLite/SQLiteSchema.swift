import ActionLinksDomain
import GRDB

// The SQLite schema, every version of it in order (v1…vN). `PostgresSchema.swift` is the same
// schema in PostgreSQL's dialect; `SchemaTests` compares the two column by column.

extension SQLiteDatabase {
    /// Named, versioned schema changes; never edit one that has shipped, add the next.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: codes, accounts, refresh tokens, event counts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE codes (
                        hash BLOB PRIMARY KEY NOT NULL,
                        mode TEXT NOT NULL,
                        tenant_id TEXT NOT NULL,
                        account_id TEXT,
                        email TEXT NOT NULL,
                        new_email TEXT,
                        continue_url TEXT,
                        language_code TEXT,
                        app_settings TEXT,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        consumed_at INTEGER,
                        consumed_by TEXT,
                        retired_at INTEGER
                    ) WITHOUT ROWID;
                    CREATE INDEX codes_outstanding ON codes (tenant_id, email, mode)
                        WHERE consumed_at IS NULL AND retired_at IS NULL;
                    CREATE INDEX codes_expiry ON codes (expires_at);
                    CREATE TABLE accounts (
                        local_id TEXT NOT NULL,
                        tenant_id TEXT NOT NULL,
                        email TEXT,
                        email_verified INTEGER NOT NULL DEFAULT 0,
                        password_hash TEXT,
                        password_updated_at INTEGER,
                        display_name TEXT,
                        disabled INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL,
                        last_login_at INTEGER,
                        valid_since INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (tenant_id, local_id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX accounts_email ON accounts (tenant_id, email) WHERE email IS NOT NULL;
                    CREATE TABLE refresh_tokens (
                        hash BLOB PRIMARY KEY NOT NULL,
                        tenant_id TEXT NOT NULL,
                        account_id TEXT NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX refresh_tokens_account ON refresh_tokens (tenant_id, account_id);
                    CREATE TABLE event_counts (
                        key TEXT NOT NULL,
                        window_start INTEGER NOT NULL,
                        count INTEGER NOT NULL,
                        PRIMARY KEY (key, window_start)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2: every user field, federated identities, sessions that remember how they signed in, tenants") { db in
            try db.execute(
                sql: """
                    ALTER TABLE accounts ADD COLUMN photo_url TEXT;
                    ALTER TABLE accounts ADD COLUMN phone_number TEXT;
                    ALTER TABLE accounts ADD COLUMN last_refresh_at INTEGER;
                    ALTER TABLE accounts ADD COLUMN custom_attributes TEXT;
                    ALTER TABLE accounts ADD COLUMN initial_email TEXT;
                    ALTER TABLE accounts ADD COLUMN email_link_signin INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE accounts ADD COLUMN custom_auth INTEGER NOT NULL DEFAULT 0;
                    CREATE UNIQUE INDEX accounts_phone ON accounts (tenant_id, phone_number) WHERE phone_number IS NOT NULL;
                    CREATE TABLE account_providers (
                        tenant_id TEXT NOT NULL,
                        provider_id TEXT NOT NULL,
                        raw_id TEXT NOT NULL,
                        local_id TEXT NOT NULL,
                        email TEXT,
                        display_name TEXT,
                        photo_url TEXT,
                        PRIMARY KEY (tenant_id, provider_id, raw_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX account_providers_account ON account_providers (tenant_id, local_id);
                    CREATE INDEX account_providers_email ON account_providers (tenant_id, email) WHERE email IS NOT NULL;
                    ALTER TABLE refresh_tokens ADD COLUMN sign_in_provider TEXT NOT NULL DEFAULT 'password';
                    ALTER TABLE refresh_tokens ADD COLUMN auth_time INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE refresh_tokens ADD COLUMN claims TEXT;
                    CREATE TABLE tenants (
                        tenant_id TEXT PRIMARY KEY NOT NULL,
                        settings TEXT NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v3: federated sign-in flows") { db in
            try db.execute(
                sql: """
                    CREATE TABLE federated_flows (
                        state_hash TEXT PRIMARY KEY NOT NULL,
                        tenant_id TEXT NOT NULL,
                        expires_at INTEGER NOT NULL,
                        returned_at INTEGER,
                        code_hash TEXT,
                        consumed_at INTEGER,
                        details TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX federated_flows_expiry ON federated_flows (expires_at);
                    """)
        }
        migrator.registerMigration("v4: the sessions of deleted accounts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE deleted_sessions (
                        hash BLOB PRIMARY KEY NOT NULL,
                        tenant_id TEXT NOT NULL,
                        deleted_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v5: used SAML assertions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE saml_assertions (
                        key TEXT PRIMARY KEY NOT NULL,
                        expires_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at);
                    """)
        }
        migrator.registerMigration("v6: screen names") { db in
            try db.execute(
                sql: """
                    ALTER TABLE accounts ADD COLUMN screen_name TEXT;
                    ALTER TABLE account_providers ADD COLUMN screen_name TEXT;
                    """)
        }
        // (v7 and v8 are PostgreSQL functions: the versions keep step with PostgreSQL's.)
        migrator.registerMigration("v9: sign-in codes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sign_in_codes (
                        tenant_id TEXT NOT NULL,
                        email TEXT NOT NULL,
                        mac BLOB NOT NULL,
                        sealed_link BLOB NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        used_at INTEGER,
                        PRIMARY KEY (tenant_id, email)
                    ) WITHOUT ROWID;
                    CREATE INDEX sign_in_codes_expiry ON sign_in_codes (expires_at);
                    """)
        }
        migrator.registerMigration("v10: an index for each condition of a purge") { db in
            // Each purge deletes by an OR of times (`expires_at < ? OR consumed_at < ? OR ...`):
            // with an index for every term the planner reads only the rows that go; with one term
            // unindexed it reads the whole table, every hour, however few rows go. The event
            // counts are keyed by their window first: every read and write names both columns,
            // and the purge's range is then the key's own (no second index to keep per count).
            try db.execute(
                sql: """
                    CREATE INDEX codes_consumed ON codes (consumed_at) WHERE consumed_at IS NOT NULL;
                    CREATE INDEX codes_retired ON codes (retired_at) WHERE retired_at IS NOT NULL;
                    CREATE INDEX sign_in_codes_used ON sign_in_codes (used_at) WHERE used_at IS NOT NULL;
                    CREATE TABLE event_counts_by_window (
                        key TEXT NOT NULL,
                        window_start INTEGER NOT NULL,
                        count INTEGER NOT NULL,
                        PRIMARY KEY (window_start, key)
                    ) WITHOUT ROWID;
                    INSERT INTO event_counts_by_window (key, window_start, count) SELECT key, window_start, count FROM event_counts;
                    DROP TABLE event_counts;
                    ALTER TABLE event_counts_by_window RENAME TO event_counts;
                    """)
        }
        migrator.registerMigration("v11: each tenant's number of accounts, kept as they come and go") { db in
            // `accounts:query`'s recordsCount read every account of the tenant (count(*) over its
            // key range: 200,000 accounts, every call). The count is kept instead, by triggers, so
            // that nothing that inserts or deletes an account can forget it. SQLite has one writer,
            // so the row costs no wait. PostgreSQL has no v11 and counts: there a count row is one
            // every sign-up's transaction would hold until it commits (PostgresAccountStore's
            // countAccounts has the measurement).
            try db.execute(
                sql: """
                    CREATE TABLE account_counts (
                        tenant_id TEXT PRIMARY KEY NOT NULL,
                        count INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO account_counts (tenant_id, count) SELECT tenant_id, count(*) FROM accounts GROUP BY tenant_id;
                    CREATE TRIGGER accounts_counted_in AFTER INSERT ON accounts BEGIN
                        INSERT INTO account_counts (tenant_id, count) VALUES (NEW.tenant_id, 1)
                            ON CONFLICT (tenant_id) DO UPDATE SET count = count + 1;
                    END;
                    CREATE TRIGGER accounts_counted_out AFTER DELETE ON accounts BEGIN
                        UPDATE account_counts SET count = count - 1 WHERE tenant_id = OLD.tenant_id;
                    END;
                    """)
        }
        migrator.registerMigration("v12: a sign-in code dies with its link") { db in
            // A sign-in code keeps the hash of its link's code, and dies in the write that
            // consumes, retires or deletes that code, whatever path wrote it (a sign-in, a newer
            // link, a password reset, a deleted account, the purge): after that it would hand out
            // a link that no longer works. A front's sign-in codes (Google's links) have none.
            try db.execute(
                sql: """
                    ALTER TABLE sign_in_codes ADD COLUMN link_hash BLOB;
                    CREATE INDEX sign_in_codes_link ON sign_in_codes (link_hash) WHERE link_hash IS NOT NULL;
                    CREATE TRIGGER codes_end_sign_in_code AFTER UPDATE OF consumed_at, retired_at ON codes
                        WHEN NEW.mode = 'signIn' AND (NEW.consumed_at IS NOT NULL OR NEW.retired_at IS NOT NULL)
                    BEGIN
                        DELETE FROM sign_in_codes WHERE link_hash = NEW.hash;
                    END;
                    CREATE TRIGGER codes_deleted_end_sign_in_code AFTER DELETE ON codes WHEN OLD.mode = 'signIn' BEGIN
                        DELETE FROM sign_in_codes WHERE link_hash = OLD.hash;
                    END;
                    """)
        }
        migrator.registerMigration("v13: the mail outbox") { db in
            // A mail waits here from the write that made it until one instance has delivered it or
            // given it up (``MailOutboxStore``). The claim reads only due mails, by the time they
            // are due: the index keeps its cost to what it takes, however much waits for later.
            try db.execute(
                sql: """
                    CREATE TABLE mail_outbox (
                        id TEXT PRIMARY KEY NOT NULL,
                        sealed BLOB NOT NULL,
                        code_hash BLOB,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        due_at INTEGER NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        leased_until INTEGER,
                        leased_by TEXT
                    ) WITHOUT ROWID;
                    CREATE INDEX mail_outbox_due ON mail_outbox (due_at);
                    """)
        }
        migrator.registerMigration("v14: second factors") { db in
            // An account's second factors (authenticator apps) as one JSON array, NULL for none:
            // they are read and written with the account, never looked up by themselves.
            try db.execute(sql: "ALTER TABLE accounts ADD COLUMN mfa TEXT")
        }
        migrator.registerMigration("v15: revoked sessions leave only their hash, and tombstones go after 30 days") { db in
            // The write that raises an account's `valid_since` (a password change, a revocation,
            // a second factor's withdrawal) moves the sessions it revokes out of `refresh_tokens`
            // into `revoked_sessions`, whatever path wrote it: `refresh_tokens` holds only sessions
            // that can still refresh. A revoked session's refresh still answers TOKEN_EXPIRED (and a
            // deleted account's USER_NOT_FOUND) until the hourly purge drops the tombstone, 30 days
            // on, through the index on its time. The sessions revoked before this version move now.
            try db.execute(
                sql: """
                    CREATE TABLE revoked_sessions (
                        hash BLOB PRIMARY KEY NOT NULL,
                        tenant_id TEXT NOT NULL,
                        account_id TEXT NOT NULL,
                        revoked_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX revoked_sessions_account ON revoked_sessions (tenant_id, account_id);
                    CREATE INDEX revoked_sessions_age ON revoked_sessions (revoked_at);
                    CREATE INDEX deleted_sessions_age ON deleted_sessions (deleted_at);
                    CREATE TRIGGER accounts_revoke_sessions AFTER UPDATE OF valid_since ON accounts
                        WHEN NEW.valid_since > OLD.valid_since
                    BEGIN
                        INSERT OR IGNORE INTO revoked_sessions (hash, tenant_id, account_id, revoked_at)
                            SELECT hash, tenant_id, account_id, NEW.valid_since * 1000 FROM refresh_tokens
                            WHERE tenant_id = NEW.tenant_id AND account_id = NEW.local_id AND created_at < NEW.valid_since * 1000;
                        DELETE FROM refresh_tokens
                            WHERE tenant_id = NEW.tenant_id AND account_id = NEW.local_id AND created_at < NEW.valid_since * 1000;
                    END;
                    INSERT OR IGNORE INTO revoked_sessions (hash, tenant_id, account_id, revoked_at)
                        SELECT r.hash, r.tenant_id, r.account_id, a.valid_since * 1000
                        FROM refresh_tokens r JOIN accounts a ON a.tenant_id = r.tenant_id AND a.local_id = r.account_id
                        WHERE r.created_at < a.valid_since * 1000;
                    DELETE FROM refresh_tokens WHERE hash IN (SELECT hash FROM revoked_sessions);
                    """)
        }
        return migrator
    }
}
