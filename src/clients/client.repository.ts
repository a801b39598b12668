import type { Kysely } from 'kysely'
import type { ClientKind, Database, Row, StandingOverride } from '../db/database.js'
import { type Standing, standingOf } from './standing.js'

export type { ClientKind, Standing, StandingOverride }

export interface Client {
  id: string
  name: string
  redirectUris: string[]
  /** The most it may be granted: a request beyond them is invalid_scope. */
  scopes: string[]
  /** What a request without `scope` gets, among `scopes` (migration 0020); null: all of them. */
  defaultScopes: string[] | null
  createdAt: Date
  disabledAt: Date | null
  /** RFC 9449: every token request of this client must carry a DPoP proof (migration 0008). */
  requireDpop: boolean
  /** RFC 9126 §6: its authorization requests must be pushed; a plain one is refused (migration 0019). */
  requirePar: boolean
  /** What users see about the application beside its name; null where the operator gave none. */
  metadata: ClientMetadata
  /** Who brought it: the operator, a Client ID Metadata Document, or a dynamic registration (RFC 7591). */
  kind: ClientKind
  /** A metadata document's: until when the copy read is fresh; null for the other kinds. */
  documentExpiresAt: Date | null
  /** The operator's decision on its standing (migration 0017); null: it follows from the kind. */
  standingOverride: StandingOverride | null
  /** Who stands behind it (standing.ts): verified, vouched for by its host, or unverified. */
  standing: Standing
  /** The grant types it may use (RFC 7591 §2 grant_types); the device grant only where named. */
  grantTypes: string[]
}

/** What an authorization request without `scope` gets (RFC 6749 §3.3): its defaults, else all its scopes. */
export function defaultScopesOf(client: Pick<Client, 'scopes' | 'defaultScopes'>): string[] {
  return client.defaultScopes ?? client.scopes
}

export interface ClientMetadata {
  homepageUrl: string | null
  privacyPolicyUrl: string | null
  termsUrl: string | null
  description: string | null
}

export function toClient(row: Row<'clients'>): Client {
  return {
    id: row.id,
    name: row.name,
    redirectUris: row.redirect_uris,
    scopes: row.scopes,
    defaultScopes: row.default_scopes,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    requireDpop: row.require_dpop,
    requirePar: row.require_par,
    metadata: {
      homepageUrl: row.homepage_url,
      privacyPolicyUrl: row.privacy_policy_url,
      termsUrl: row.terms_url,
      description: row.description,
    },
    kind: row.kind,
    documentExpiresAt: row.document_expires_at,
    standingOverride: row.standing_override,
    standing: standingOf({ kind: row.kind, standingOverride: row.standing_override }),
    grantTypes: row.grant_types,
  }
}

/** The metadata columns that are given (exported for the metadata-document upsert) (undefined leaves a column as it is; null clears it). */
export function metadataColumns(metadata: Partial<ClientMetadata>) {
  return {
    ...(metadata.homepageUrl !== undefined ? { homepage_url: metadata.homepageUrl } : {}),
    ...(metadata.privacyPolicyUrl !== undefined ? { privacy_policy_url: metadata.privacyPolicyUrl } : {}),
    ...(metadata.termsUrl !== undefined ? { terms_url: metadata.termsUrl } : {}),
    ...(metadata.description !== undefined ? { description: metadata.description } : {}),
  }
}

export async function insertClient(
  db: Kysely<Database>,
  client: {
    id: string
    name: string
    redirectUris: string[]
    scopes: string[]
    defaultScopes?: string[] | null
    requireDpop?: boolean
    requirePar?: boolean
    grantTypes?: string[]
    metadata?: Partial<ClientMetadata>
    kind?: ClientKind
    registrationTokenHash?: string
    /** The service's clock (housekeeping compares it); the database's when left out. */
    createdAt?: Date
  },
): Promise<Client> {
  const row = await db
    .insertInto('clients')
    .values({
      id: client.id,
      name: client.name,
      redirect_uris: client.redirectUris,
      scopes: client.scopes,
      default_scopes: client.defaultScopes ?? null,
      require_dpop: client.requireDpop ?? false,
      require_par: client.requirePar ?? false,
      ...(client.grantTypes ? { grant_types: client.grantTypes } : {}),
      ...metadataColumns(client.metadata ?? {}),
      ...(client.kind ? { kind: client.kind } : {}),
      ...(client.registrationTokenHash ? { registration_token_hash: client.registrationTokenHash } : {}),
      ...(client.createdAt ? { created_at: client.createdAt } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toClient(row)
}

/** Inside a transaction: the client, locked until the transaction ends (FOR UPDATE); undefined: none. */
export async function lockClient(trx: Kysely<Database>, id: string): Promise<Client | undefined> {
  const row = await trx.selectFrom('clients').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
  return row && toClient(row)
}

/** Writes the given fields of a client (the others stay); the client as it now is. */
export async function updateClient(
  db: Kysely<Database>,
  id: string,
  fields: {
    name?: string
    redirectUris?: string[]
    scopes?: string[]
    /** null: all of its scopes. */
    defaultScopes?: string[] | null
    grantTypes?: string[]
    metadata?: Partial<ClientMetadata>
    requirePar?: boolean | undefined
  },
): Promise<Client> {
  const row = await db
    .updateTable('clients')
    .set({
      ...(fields.name !== undefined ? { name: fields.name } : {}),
      ...(fields.redirectUris !== undefined ? { redirect_uris: fields.redirectUris } : {}),
      ...(fields.scopes !== undefined ? { scopes: fields.scopes } : {}),
      ...(fields.defaultScopes !== undefined ? { default_scopes: fields.defaultScopes } : {}),
      ...(fields.requirePar !== undefined ? { require_par: fields.requirePar } : {}),
      ...(fields.grantTypes !== undefined ? { grant_types: fields.grantTypes } : {}),
      ...metadataColumns(fields.metadata ?? {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
  return toClient(row)
}

/** Clears disabled_at; the client, or undefined when there is none. Idempotent. */
export async function enableClient(db: Kysely<Database>, id: string): Promise<Client | undefined> {
  const row = await db
    .updateTable('clients')
    .set({ disabled_at: null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && toClient(row)
}

export async function findClientById(db: Kysely<Database>, id: string): Promise<Client | undefined> {
  const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toClient(row)
}

/**
 * Whether any client is registered at all (the first-run hint's question): one index probe, where
 * listClients would read every row (a year's dynamic registrations are hundreds of thousands).
 */
export async function hasClients(db: Kysely<Database>): Promise<boolean> {
  const row = await db.selectFrom('clients').select('id').limit(1).executeTakeFirst()
  return row !== undefined
}

export async function listClients(db: Kysely<Database>): Promise<Client[]> {
  const rows = await db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute()
  return rows.map(toClient)
}

/** Marks a client disabled; returns it, or undefined when there is no such client. Idempotent. */
export async function disableClient(
  db: Kysely<Database>,
  id: string,
  now: Date,
): Promise<Client | undefined> {
  const row = await db
    .updateTable('clients')
    .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.val(now)) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && toClient(row)
}

/** The redirect URIs of every enabled client, by client id (the CORS origins are made from them). */
export async function listEnabledRedirectUris(
  db: Kysely<Database>,
): Promise<{ id: string; redirectUris: string[] }[]> {
  const rows = await db
    .selectFrom('clients')
    .select(['id', 'redirect_uris'])
    .where('disabled_at', 'is', null)
    .execute()
  return rows.map((row) => ({ id: row.id, redirectUris: row.redirect_uris }))
}

/** The names of the applications the operator stands behind: registered and not demoted, or verified. */
export async function listVerifiedClientNames(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('clients')
    .select('name')
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'registered'), eb('standing_override', 'is', null)]),
        eb('standing_override', '=', 'verified'),
      ]),
    )
    .execute()
  return rows.map((row) => row.name)
}

/** Sets (or with null clears) the operator's decision on a client's standing; the client, or undefined. */
export async function setClientStanding(
  db: Kysely<Database>,
  id: string,
  override: StandingOverride | null,
  now: Date,
): Promise<Client | undefined> {
  const row = await db
    .updateTable('clients')
    .set({ standing_override: override, standing_set_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && toClient(row)
}
