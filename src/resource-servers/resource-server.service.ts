import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import {
  type AuditDetails,
  type AuditEventType,
  type AuditRecorder,
  NO_AUDIT,
  OPERATOR,
  type RequestFacts,
} from '../audit/audit.service.js'
import { isUniqueViolation } from '../db/errors.js'
import { ProblemError } from '../errors.js'
import type { GrantService, ResourceForgotten } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isCallerIdShape, newResourceServerId, newSecret } from '../lib/identifiers.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import { normalizeScopes } from '../lib/scopes.js'
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  type NewResourceServer,
  type ResourceServerUpdate,
} from './resource-server.schemas.js'
import { constantTimeEqual, sha256 } from '../lib/secrets.js'
import {
  deleteResourceServer,
  findResourceServer,
  findResourceServerCredentials,
  findResourceTargets,
  insertResourceServer,
  listEnabledResources,
  listResourceServers,
  lockResourceServer,
  replaceResourceServerSecret,
  type ResourceServer,
  type ResourceServerCredentials,
  type ResourceTarget,
  setResourceServerDisabled,
  updateResourceServer,
} from './resource-server.repository.js'

export type { ResourceForgotten, ResourceServer, ResourceTarget }

/** A resource server whose credentials were checked: its id, and its resource (null: default audience). */
export interface AuthenticatedResourceServer {
  id: string
  resource: string | null
}

/**
 * Introspection authenticates every call; the secret hashes and resource of a known server are kept
 * in memory this long (a cache age on the monotonic clock, not domain time), so the hot path is one
 * query, not two. A change made through this instance (disable, delete, secret rotation) drops its
 * entry at once; other instances see it within this age. A secret that does not match a cached
 * entry is checked against the database once more, so a new secret works everywhere at once. The
 * end of a rotation's overlap is compared with the clock at each call, cached or not. Unknown ids
 * are never cached, and the cache is bounded.
 */
const CREDENTIALS_CACHE_MS = 5_000
const CREDENTIALS_CACHE_MAX = 1_000

/**
 * The authorization server's metadata lists the registered resource identifiers (RFC 9728 §4); it
 * is asked for often (every client's discovery) and changes rarely, so the list is read at most this
 * often, and a failed read keeps serving the last list.
 */
const PROTECTED_RESOURCES_CACHE_MS = 30_000

/** Compared against when there is no (previous) secret, so that every call does the same work. */
const NO_SECRET_HASH = sha256('no such secret')

export function createResourceServerService(
  db: Kysely<Database>,
  config: Pick<Config, 'accessTokenAudience'>,
  clock: Clock,
  grants: Pick<GrantService, 'forgetResource'>,
  audit: AuditRecorder = NO_AUDIT,
) {
  const cache = new Map<string, ResourceServerCredentials & { at: number }>()
  let protectedResources: { list: string[]; at: number } | undefined
  let refreshing: Promise<string[]> | undefined
  /** Bumped by a registration: a read that began before it must not be kept as fresh. */
  let generation = 0

  async function credentials(id: string, fresh = false): Promise<ResourceServerCredentials | undefined> {
    const cached = cache.get(id)
    if (!fresh && cached && performance.now() - cached.at < CREDENTIALS_CACHE_MS) return cached
    const found = await findResourceServerCredentials(db, id)
    if (found === undefined) {
      cache.delete(id)
      return undefined
    }
    if (cache.size >= CREDENTIALS_CACHE_MAX) cache.clear()
    cache.set(id, { ...found, at: performance.now() })
    return found
  }

  function refreshProtectedResources(): Promise<string[]> {
    if (refreshing) return refreshing
    const started = generation
    const read: Promise<string[]> = listEnabledResources(db)
      .then((list) => {
        if (started === generation) protectedResources = { list, at: performance.now() }
        return list
      })
      .catch((err: unknown) => {
        if (protectedResources) return protectedResources.list
        throw err
      })
      .finally(() => {
        if (refreshing === read) refreshing = undefined
      })
    refreshing = read
    return read
  }

  /** A resource server changed here: this instance forgets what it kept about it. */
  function changed(id: string): void {
    cache.delete(id)
    generation += 1
    protectedResources = undefined
    refreshing = undefined
  }

  async function existing(id: string): Promise<ResourceServer> {
    const server = isCallerIdShape(id) ? await findResourceServer(db, id) : undefined
    if (!server) throw new ProblemError(404, 'No resource server with this id.')
    return server
  }

  const orNotFound = (server: ResourceServer | undefined): ResourceServer => {
    if (!server) throw new ProblemError(404, 'No resource server with this id.')
    return server
  }

  /** The operator's change to one resource server, recorded in the audit trail with it. */
  const recordChange = (
    trx: Kysely<Database>,
    type: Extract<AuditEventType, `resource_server.${string}`>,
    id: string,
    details: AuditDetails,
    from: RequestFacts | undefined,
  ) => audit.record(trx, { type, actor: OPERATOR, target: { kind: 'resource_server', id }, details, from })

  /**
   * Disables (at `now`) or enables (null) it, recording the change when there is one: asking for the
   * state it is in changes nothing and records nothing. Unknown id → 404.
   */
  async function setDisabled(id: string, now: Date | null, from?: RequestFacts): Promise<ResourceServer> {
    if (!isCallerIdShape(id)) throw new ProblemError(404, 'No resource server with this id.')
    const server = await db.transaction().execute(async (trx) => {
      const before = orNotFound(await lockResourceServer(trx, id))
      if ((before.disabledAt === null) === (now === null)) return before
      const after = orNotFound(await setResourceServerDisabled(trx, id, now))
      await recordChange(
        trx,
        now ? 'resource_server.disabled' : 'resource_server.enabled',
        id,
        { name: after.name, resource: after.resource },
        from,
      )
      return after
    })
    changed(id)
    return server
  }

  /** Whether `secret` is this server's current secret, or its previous one inside the overlap. */
  function secretMatches(stored: ResourceServerCredentials | undefined, secret: string): boolean {
    const presented = sha256(secret)
    // Both comparisons always run, in constant time: the answer's timing says nothing about which.
    const current = constantTimeEqual(stored?.secretHash ?? NO_SECRET_HASH, presented)
    const previous = constantTimeEqual(stored?.previousSecretHash ?? NO_SECRET_HASH, presented)
    const overlapEnds = stored?.previousSecretExpiresAt
    const inOverlap = overlapEnds !== null && overlapEnds !== undefined && clock.now() < overlapEnds
    return stored !== undefined && (current || (previous && inOverlap && stored.previousSecretHash !== null))
  }

  return {
    /**
     * Registers a resource server. The secret (256 random bits) is returned once and stored only as
     * its SHA-256: with that much entropy a slow hash adds nothing, and introspection stays fast.
     * A resource another resource server has → 409.
     */
    async createResourceServer(
      input: NewResourceServer,
      from?: RequestFacts,
    ): Promise<ResourceServer & { secret: string }> {
      // Default-audience tokens are every old API's: an API registered under that name would take
      // them as its own, and its own tokens would be good at every old API.
      if (input.resource === config.accessTokenAudience)
        throw new ProblemError(
          400,
          'resource: must not be the default audience (ACCESS_TOKEN_AUDIENCE), which every API without a resource accepts',
          'resource',
        )
      const secret = newSecret()
      try {
        const server = await db.transaction().execute(async (trx) => {
          const created = await insertResourceServer(trx, {
            id: newResourceServerId(),
            name: input.name,
            secretHash: sha256(secret),
            resource: input.resource ?? null,
            scopes: normalizeScopes(input.scopes ?? []),
          })
          await audit.record(trx, {
            type: 'resource_server.created',
            actor: OPERATOR,
            target: { kind: 'resource_server', id: created.id },
            details: { name: created.name, resource: created.resource, scopes: created.scopes },
            from,
          })
          return created
        })
        changed(server.id)
        return { ...server, secret }
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ProblemError(409, 'resource: another resource server has this resource', 'resource')
        throw err
      }
    },
    listResourceServers: () => listResourceServers(db),
    /** One resource server (never its secret); unknown id → 404. */
    getResourceServer: (id: string): Promise<ResourceServer> => existing(id),
    /**
     * Renames it or changes the scopes it serves (only one with a resource serves scopes). Tokens
     * issued from now on follow; tokens already issued keep their scope until they expire.
     */
    async updateResourceServer(
      id: string,
      patch: ResourceServerUpdate,
      from?: RequestFacts,
    ): Promise<ResourceServer> {
      const server = await existing(id)
      if (patch.scopes !== undefined && server.resource === null)
        throw new ProblemError(
          400,
          'scopes: this resource server has no resource; it accepts default-audience tokens with every granted scope',
          'scopes',
        )
      const updated = await db.transaction().execute(async (trx) => {
        const after = orNotFound(
          await updateResourceServer(trx, id, {
            name: patch.name,
            scopes: patch.scopes && normalizeScopes(patch.scopes),
          }),
        )
        await recordChange(
          trx,
          'resource_server.updated',
          id,
          {
            ...(patch.name !== undefined ? { name: after.name, previous_name: server.name } : {}),
            ...(patch.scopes !== undefined ? { scopes: after.scopes, previous_scopes: server.scopes } : {}),
          },
          from,
        )
        return after
      })
      changed(id)
      return updated
    },
    /**
     * Disables it: its calls to introspection and the event feed get 401 (at once on this instance,
     * within CREDENTIALS_CACHE_MS on others), no token is issued for its resource any more (the token
     * endpoint reads the registry uncached), and it leaves `protected_resources`. Grants naming it
     * stay, so enabling it again restores it. Idempotent; unknown id → 404.
     */
    disableResourceServer: (id: string, from?: RequestFacts): Promise<ResourceServer> =>
      setDisabled(id, clock.now(), from),
    /** Enables it again, with its secret, resource and scopes as they were. Idempotent; unknown id → 404. */
    enableResourceServer: (id: string, from?: RequestFacts): Promise<ResourceServer> =>
      setDisabled(id, null, from),
    /**
     * Deletes it, in one transaction with what was granted for its resource: refresh families whose
     * authorization named it are revoked (announced on the feed), grants forget it, unredeemed codes
     * for it expire (GrantService.forgetResource). So nothing issued for it can come back if its
     * identifier is registered again. Unknown id → 404.
     */
    async deleteResourceServer(
      id: string,
      from?: RequestFacts,
    ): Promise<{ server: ResourceServer; forgotten: ResourceForgotten | undefined }> {
      if (!isCallerIdShape(id)) throw new ProblemError(404, 'No resource server with this id.')
      const result = await db.transaction().execute(async (trx) => {
        const server = orNotFound(await deleteResourceServer(trx, id))
        const forgotten =
          server.resource === null ? undefined : await grants.forgetResource(server.resource, trx)
        await recordChange(
          trx,
          'resource_server.deleted',
          id,
          {
            name: server.name,
            resource: server.resource,
            ...(forgotten
              ? {
                  refresh_families_revoked: forgotten.familiesRevoked,
                  grants_narrowed: forgotten.grantsNarrowed,
                  codes_expired: forgotten.codesExpired,
                }
              : {}),
          },
          from,
        )
        return { server, forgotten }
      })
      changed(id)
      return result
    },
    /**
     * A new secret (256 random bits), returned once and stored as its SHA-256. The old one keeps
     * working for `overlapSeconds` (0: stops at once), so the API can switch without downtime;
     * a secret replaced by an earlier rotation stops now. Unknown id → 404.
     */
    async rotateSecret(
      id: string,
      overlapSeconds: number = DEFAULT_SECRET_OVERLAP_SECONDS,
      from?: RequestFacts,
    ): Promise<ResourceServer & { secret: string }> {
      if (!isCallerIdShape(id)) throw new ProblemError(404, 'No resource server with this id.')
      const secret = newSecret()
      const until = overlapSeconds > 0 ? addSeconds(clock.now(), overlapSeconds) : null
      const server = await db.transaction().execute(async (trx) => {
        const after = orNotFound(await replaceResourceServerSecret(trx, id, sha256(secret), until))
        // The secret itself is never recorded; only until when the one it replaced still works.
        await recordChange(
          trx,
          'resource_server.secret_rotated',
          id,
          { overlap_seconds: overlapSeconds, previous_secret_until: until?.toISOString() ?? null },
          from,
        )
        return after
      })
      changed(id)
      return { ...server, secret }
    },
    /**
     * The enabled resource servers whose `resource` is exactly one of these (RFC 8707 targets).
     * A string no registration could have (say, with a NUL byte, which PostgreSQL refuses in a
     * statement) is no target and never reaches the query.
     */
    async findTargets(resources: string[]): Promise<Map<string, ResourceTarget>> {
      const candidates = resources.filter((r) => resourceIdentifierProblem(r) === null)
      if (candidates.length === 0) return new Map()
      const targets = await findResourceTargets(db, candidates)
      return new Map(targets.map((t) => [t.resource, t]))
    },
    /** RFC 9728 §4 `protected_resources`: the identifiers of the enabled resource servers. */
    async protectedResources(): Promise<string[]> {
      if (protectedResources && performance.now() - protectedResources.at < PROTECTED_RESOURCES_CACHE_MS)
        return protectedResources.list
      return refreshProtectedResources()
    },
    /** The enabled resource server with this id, when its secret matches (constant-time). */
    async authenticate(id: string, secret: string): Promise<AuthenticatedResourceServer | undefined> {
      if (!isCallerIdShape(id)) return undefined // not an id we issue; never reaches a query
      let stored = await credentials(id)
      // A cached entry may predate a rotation on another instance: ask the database once more.
      if (stored && !secretMatches(stored, secret)) stored = await credentials(id, true)
      return stored && secretMatches(stored, secret) ? { id, resource: stored.resource } : undefined
    },
  }
}

export type ResourceServerService = ReturnType<typeof createResourceServerService>
