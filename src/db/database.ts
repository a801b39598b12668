import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

/** A timestamptz column: read as Date, written as Date or left to its default. */
type CreatedAt = ColumnType<Date, Date | undefined, never>
type Timestamp = ColumnType<Date, Date, Date>
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>

export interface UsersTable {
  id: Generated<string>
  email: string
  password_hash: string
  created_at: CreatedAt
  /** False once the user turned password sign-in off (they sign in with a passkey; migration 0015). */
  password_sign_in: ColumnType<boolean, boolean | undefined, boolean>
}

export interface ClientsTable {
  id: string
  name: string
  redirect_uris: string[]
  scopes: string[]
  created_at: CreatedAt
  disabled_at: NullableTimestamp
  /** Every token request must carry a DPoP proof (migration 0008). */
  require_dpop: ColumnType<boolean, boolean | undefined, boolean>
  /** Authorization requests must be pushed, RFC 9126 §6 (migration 0019). */
  require_par: ColumnType<boolean, boolean | undefined, boolean>
  /** Display metadata shown to users (migration 0009); null: not given. */
  homepage_url: ColumnType<string | null, string | null | undefined, string | null>
  privacy_policy_url: ColumnType<string | null, string | null | undefined, string | null>
  terms_url: ColumnType<string | null, string | null | undefined, string | null>
  description: ColumnType<string | null, string | null | undefined, string | null>
  /** Who brought the client (migration 0014): the operator, a metadata document, a dynamic registration. */
  kind: ColumnType<ClientKind, ClientKind | undefined, ClientKind>
  /** A metadata document's last successful read, and until when it is fresh. */
  document_fetched_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  document_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** SHA-256 of a dynamic registration's access token (RFC 7592). */
  registration_token_hash: ColumnType<string | null, string | null | undefined, string | null>
  /** What a request without `scope` gets (migration 0020); null: all of `scopes`. */
  default_scopes: ColumnType<string[] | null, string[] | null | undefined, string[] | null>
  /** The operator's decision on the app's standing (migration 0017); null: it follows from the kind. */
  standing_override: ColumnType<
    StandingOverride | null,
    StandingOverride | null | undefined,
    StandingOverride | null
  >
  /** When the operator last set or cleared standing_override. */
  standing_set_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** The grant types it may use (migration 0018, RFC 7591 §2). */
  grant_types: ColumnType<string[], string[] | undefined, string[]>
}

export type ClientKind = 'registered' | 'metadata_document' | 'dynamic'

/** What the operator can decide about an app's standing (src/clients/standing.ts reads it). */
export type StandingOverride = 'verified' | 'unverified'

/** client_id URLs the operator blocked (migration 0014). */
export interface BlockedClientIdsTable {
  client_id: string
  reason: string | null
  blocked_at: Date
}

export interface SignInSessionsTable {
  id: Generated<string>
  token_hash: string
  user_id: string
  csrf_secret: string
  created_at: CreatedAt
  expires_at: Timestamp
  /** The last fresh password or passkey check in this session (migration 0015). */
  reauthenticated_at: NullableTimestamp
}

export interface PendingAuthorizationsTable {
  id: string
  client_id: string
  redirect_uri: string
  scopes: string[]
  state: string | null
  code_challenge: string
  prompt: string | null
  created_at: CreatedAt
  expires_at: Timestamp
  completed_at: NullableTimestamp
  /** Resource identifiers (RFC 8707) named by the authorization request; empty: none (migration 0006). */
  resources: ColumnType<string[], string[] | undefined, string[]>
  /** Set when a sign-in for this very request succeeds (migration 0002). */
  session_id: ColumnType<string | null, string | null | undefined, string | null>
  /** RFC 9449 §10: the key thumbprint the authorization request's dpop_jkt named (migration 0008). */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
  /** OIDC ui_locales: the first of the request's languages the pages speak (migration 0023). */
  ui_locale: ColumnType<string | null, string | null | undefined, string | null>
}

export interface GrantsTable {
  id: Generated<string>
  user_id: string
  client_id: string
  scopes: string[]
  created_at: CreatedAt
  updated_at: ColumnType<Date, Date | undefined, Date>
  last_used_at: NullableTimestamp
  revoked_at: NullableTimestamp
  /** Resource identifiers (RFC 8707) the user consented to, beside the scopes (migration 0006). */
  resources: ColumnType<string[], string[] | undefined, string[]>
  /** The last Allow of a device request (RFC 8628, migration 0018): the app runs on another device. */
  device_authorized_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface AuthorizationCodesTable {
  code_hash: string
  client_id: string
  user_id: string
  grant_id: string
  redirect_uri: string
  scopes: string[]
  code_challenge: string
  created_at: CreatedAt
  expires_at: Timestamp
  consumed_at: NullableTimestamp
  family_id: string | null
  /** Resource identifiers (RFC 8707) named by the authorization request; empty: none (migration 0006). */
  resources: ColumnType<string[], string[] | undefined, string[]>
  /** RFC 9449 §10: the key thumbprint the authorization request's dpop_jkt named (migration 0008). */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

export interface RefreshFamiliesTable {
  id: Generated<string>
  grant_id: string
  client_id: string
  user_id: string
  scopes: string[]
  created_at: CreatedAt
  expires_at: Timestamp
  revoked_at: NullableTimestamp
  revoked_reason: string | null
  /** Resource identifiers (RFC 8707) named by the authorization request; empty: none (migration 0006). */
  resources: ColumnType<string[], string[] | undefined, string[]>
  /** RFC 9449 §5: the key thumbprint the family's refresh tokens are bound to; null: unbound (migration 0008). */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

export interface RefreshTokensTable {
  token_hash: string
  family_id: string
  scopes: string[]
  created_at: CreatedAt
  expires_at: Timestamp
  rotated_at: NullableTimestamp
  /** Answers this spent token gave inside REFRESH_REUSE_WINDOW after it rotated (migration 0007). */
  window_answers: ColumnType<number, number | undefined, number>
  /**
   * The successor this spent token's rotation issued, encrypted under the key-encryption key and
   * bound to token_hash; read only inside the retry window, then wiped (migration 0013).
   */
  successor_encrypted: ColumnType<string | null, string | null | undefined, string | null>
}

export interface RevokedAccessTokensTable {
  jti: string
  expires_at: Timestamp
  revoked_at: CreatedAt
}

export interface SigningKeysTable {
  kid: string
  alg: string
  public_jwk: ColumnType<Record<string, unknown>, string, string>
  private_key_encrypted: string
  created_at: CreatedAt
  retired_at: NullableTimestamp
  /** Made ahead by the rotation schedule, published, not signing yet (migration 0010). */
  pending: Generated<boolean>
  /** When a pending key starts signing; for an active or retired one, when it started (null: created_at). */
  activates_at: NullableTimestamp
  /** Removed in an emergency: never published, never verifies. */
  revoked_at: NullableTimestamp
  /** Which key-encryption key encrypted the private half (its id, never the key); null before 0010. */
  kek_id: ColumnType<string | null, string | null | undefined, string | null>
}

export interface ResourceServersTable {
  id: string
  name: string
  secret_hash: string
  created_at: CreatedAt
  disabled_at: NullableTimestamp
  /** The API's resource identifier (RFC 8707); null: registered before 0006, default audience. */
  resource: ColumnType<string | null, string | null | undefined, string | null>
  /** The scopes this API serves (migration 0006). */
  scopes: ColumnType<string[], string[] | undefined, string[]>
  /** The secret a rotation replaced, still accepted until previous_secret_expires_at (migration 0009). */
  previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>
  previous_secret_expires_at: NullableTimestamp
}

export type RevocationEventType =
  'grant-revoked' | 'family-revoked' | 'access-token-revoked' | 'client-disabled' | 'key-revoked'

/** Written only by the revocation triggers (migration 0003); read by the event feed. */
export interface RevocationEventsTable {
  id: Generated<string>
  type: RevocationEventType
  grant_id: string | null
  family_id: string | null
  access_token_jti: string | null
  client_id: string | null
  /** The signing key a key-revoked event removes (migration 0010). */
  kid: ColumnType<string | null, string | null | undefined, string | null>
  created_at: Timestamp
  until: Timestamp
}

/** One row: the lifetime the triggers give grant, family and client events. */
export interface RevocationEventSettingsTable {
  singleton: ColumnType<boolean, boolean | undefined, never>
  access_token_ttl_seconds: number
  leeway_seconds: number
}

/** A resource server's subscription to the feed (RFC 8936 polling). */
export interface EventStreamsTable {
  id: Generated<string>
  resource_server_id: string
  created_at: Timestamp
  last_polled_at: Timestamp
}

export interface RevocationEventAcksTable {
  stream_id: string
  event_id: string
}

/** DPoP proofs already accepted (RFC 9449 §11.1), until they could not be accepted anyway (migration 0008). */
export interface DpopProofJtisTable {
  key_hash: string
  expires_at: Timestamp
}

/** Append-only: a trigger refuses UPDATE; housekeeping deletes rows past AUDIT_RETENTION (migration 0011). */
export interface AuditEventsTable {
  id: ColumnType<string, never, never>
  occurred_at: ColumnType<Date, Date, never>
  event_type: ColumnType<string, string, never>
  actor_kind: ColumnType<string, string, never>
  actor_id: ColumnType<string | null, string | null | undefined, never>
  target_kind: ColumnType<string | null, string | null | undefined, never>
  target_id: ColumnType<string | null, string | null | undefined, never>
  user_id: ColumnType<string | null, string | null | undefined, never>
  client_id: ColumnType<string | null, string | null | undefined, never>
  client_address: ColumnType<string | null, string | null | undefined, never>
  user_agent: ColumnType<string | null, string | null | undefined, never>
  request_id: ColumnType<string | null, string | null | undefined, never>
  details: ColumnType<Record<string, unknown>, string, never>
}

/** One-time password-reset links: only the SHA-256 of a link's token is kept (migration 0011). */
export interface PasswordResetTokensTable {
  token_hash: string
  user_id: string
  created_at: Date
  expires_at: Date
  used_at: NullableTimestamp
}

/** A user's WebAuthn credentials (migration 0015). */
export interface PasskeysTable {
  id: Generated<string>
  user_id: string
  credential_id: string
  public_key: Uint8Array
  /** bigint in SQL; read as a string by pg, written as a number. */
  sign_count: ColumnType<string | number, number | undefined, number>
  transports: ColumnType<string[], string[] | undefined, string[]>
  backup_eligible: boolean
  backed_up: boolean
  name: string
  created_at: CreatedAt
  last_used_at: NullableTimestamp
}

/** WebAuthn challenges handed out and not yet used (migration 0015): spent by DELETE … RETURNING. */
export interface WebauthnChallengesTable {
  challenge_hash: string
  purpose: 'sign_in' | 'register' | 'reauthenticate' | 'reset'
  binding_hash: string
  user_id: string | null
  created_at: Date
  expires_at: Date
}

/** RFC 9126: a pushed authorization request, by the hash of its request_uri's handle (migration 0019). */
export interface PushedAuthorizationRequestsTable {
  handle_hash: string
  client_id: string
  parameters: ColumnType<Record<string, string | string[]>, string, string>
  created_at: Date
  expires_at: Date
}

/** Device authorization requests (RFC 8628, migration 0018): both codes kept as SHA-256 only. */
export interface DeviceAuthorizationsTable {
  id: string
  device_code_hash: string
  user_code_hash: string
  client_id: string
  scopes: string[]
  resources: string[]
  status: ColumnType<
    DeviceAuthorizationStatus,
    DeviceAuthorizationStatus | undefined,
    DeviceAuthorizationStatus
  >
  user_id: ColumnType<string | null, string | null | undefined, string | null>
  grant_id: ColumnType<string | null, string | null | undefined, string | null>
  family_id: ColumnType<string | null, string | null | undefined, string | null>
  interval_seconds: number
  last_polled_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  created_at: Date
  expires_at: Date
}

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied'

export interface Database {
  users: UsersTable
  clients: ClientsTable
  blocked_client_ids: BlockedClientIdsTable
  sign_in_sessions: SignInSessionsTable
  pending_authorizations: PendingAuthorizationsTable
  grants: GrantsTable
  authorization_codes: AuthorizationCodesTable
  refresh_families: RefreshFamiliesTable
  refresh_tokens: RefreshTokensTable
  revoked_access_tokens: RevokedAccessTokensTable
  signing_keys: SigningKeysTable
  resource_servers: ResourceServersTable
  revocation_events: RevocationEventsTable
  revocation_event_settings: RevocationEventSettingsTable
  event_streams: EventStreamsTable
  revocation_event_acks: RevocationEventAcksTable
  dpop_proof_jtis: DpopProofJtisTable
  passkeys: PasskeysTable
  webauthn_challenges: WebauthnChallengesTable
  pushed_authorization_requests: PushedAuthorizationRequestsTable
  audit_events: AuditEventsTable
  password_reset_tokens: PasswordResetTokensTable
  device_authorizations: DeviceAuthorizationsTable
}

export type Row<T extends keyof Database> = Selectable<Database[T]>
export type NewRow<T extends keyof Database> = Insertable<Database[T]>
