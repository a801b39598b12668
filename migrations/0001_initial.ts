import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull().check(sql`length(email) between 3 and 320`))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index users_email_lower_key on users (lower(email))`.execute(db)

  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey().check(sql`id ~ '^[A-Za-z0-9_-]{8,64}$'`))
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('redirect_uris', sql`text[]`, (c) =>
      c.notNull().check(sql`cardinality(redirect_uris) between 1 and 10`),
    )
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().check(sql`cardinality(scopes) >= 1`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('disabled_at', 'timestamptz')
    .execute()

  await db.schema
    .createTable('sign_in_sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('sign_in_sessions_user_id_idx')
    .on('sign_in_sessions')
    .column('user_id')
    .execute()

  // A validated authorization request, kept server-side while the user signs in and consents.
  await db.schema
    .createTable('pending_authorizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .execute()
  await db.schema
    .createIndex('pending_authorizations_expires_at_idx')
    .on('pending_authorizations')
    .column('expires_at')
    .execute()

  // One live grant per (user, client): the scopes the user consented to.
  await db.schema
    .createTable('grants')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().check(sql`cardinality(scopes) >= 1`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute()
  await sql`create unique index grants_live_user_client_key on grants (user_id, client_id) where revoked_at is null`.execute(
    db,
  )
  await db.schema.createIndex('grants_client_id_idx').on('grants').column('client_id').execute()

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('grant_id', 'uuid', (c) => c.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) =>
      c.notNull().check(sql`code_challenge ~ '^[A-Za-z0-9_-]{43}$'`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('consumed_at', 'timestamptz')
    // The refresh family the redemption started, so that a replay can revoke it.
    .addColumn('family_id', 'uuid')
    .execute()
  await db.schema
    .createIndex('authorization_codes_grant_id_idx')
    .on('authorization_codes')
    .column('grant_id')
    .execute()
  await db.schema
    .createIndex('authorization_codes_expires_at_idx')
    .on('authorization_codes')
    .column('expires_at')
    .execute()

  // A refresh family starts at a code exchange; every rotation stays in it.
  await db.schema
    .createTable('refresh_families')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('grant_id', 'uuid', (c) => c.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute()
  await db.schema
    .createIndex('refresh_families_grant_id_idx')
    .on('refresh_families')
    .column('grant_id')
    .execute()
  await sql`alter table authorization_codes add constraint authorization_codes_family_id_fkey
    foreign key (family_id) references refresh_families (id) on delete set null`.execute(db)

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('family_id', 'uuid', (c) => c.notNull().references('refresh_families.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('rotated_at', 'timestamptz')
    .execute()
  await db.schema
    .createIndex('refresh_tokens_family_id_idx')
    .on('refresh_tokens')
    .column('family_id')
    .execute()
  // At most one usable (unrotated) token per family.
  await sql`create unique index refresh_tokens_one_live_per_family on refresh_tokens (family_id) where rotated_at is null`.execute(
    db,
  )

  // Access tokens revoked one by one (RFC 7009), kept until they would have expired anyway.
  await db.schema
    .createTable('revoked_access_tokens')
    .addColumn('jti', 'uuid', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull().check(sql`alg in ('ES256', 'EdDSA', 'RS256')`))
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('private_key_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .execute()
  // Exactly one active key at a time.
  await sql`create unique index signing_keys_one_active on signing_keys ((true)) where retired_at is null`.execute(
    db,
  )

  await db.schema
    .createTable('resource_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('disabled_at', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'resource_servers',
    'signing_keys',
    'revoked_access_tokens',
    'refresh_tokens',
    'authorization_codes',
    'refresh_families',
    'grants',
    'pending_authorizations',
    'sign_in_sessions',
    'clients',
    'users',
  ]) {
    await db.schema.dropTable(table).ifExists().cascade().execute()
  }
}
