import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import { ProblemError } from '../errors.js'
import { isCallerIdShape, newResourceServerId, newSecret } from '../lib/identifiers.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import { ALL_SCOPES, isKnownScope, normalizeScopes } from '../lib/scopes.js'
import { constantTimeEqual, sha256 } from '../lib/secrets.js'
import {
  findResourceServerCredentials,
  findResourceTargets,
  insertResourceServer,
  listEnabledResources,
  listResourceServers,
  type ResourceServer,
  type ResourceServerCredentials,
  type ResourceTarget,
} from './resource-server.repository.js'

export type { ResourceServer, ResourceTarget }

/**
 * `resource` and `scopes` come together: an API with an identifier but no scopes could never get a
 * token (its scope is the granted scopes it serves), and scopes without an identifier would never be
 * used (a resource server without one gets default-audience tokens with every granted scope).
 */
export const newResourceServerSchema = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
    resource: z
      .string('an absolute URI')
      .superRefine((uri, ctx) => {
        const problem = resourceIdentifierProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      })
      .optional()
      .meta({
        description:
          'The API\'s resource identifier (RFC 8707): an absolute https URI (http on a loopback host), no fragment, at most 2048 characters, unique. Tokens for it carry it as "aud".',
      }),
    scopes: z
      .array(
        z.string().refine(isKnownScope, { error: `unknown scope; known scopes: ${ALL_SCOPES.join(', ')}` }),
        'a list of scopes',
      )
      .min(1, 'at least one scope')
      .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope')
      .optional()
      .meta({ description: 'The scopes this API serves; required with resource.' }),
  })
  .superRefine((input, ctx) => {
    if (input.resource !== undefined && input.scopes === undefined)
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'name the scopes this API serves' })
    if (input.scopes !== undefined && input.resource === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['resource'],
        message: 'scopes are served at a resource; name it',
      })
  })

export type NewResourceServer = z.output<typeof newResourceServerSchema>

/** A resource server whose credentials were checked: its id, and its resource (null: default audience). */
export interface AuthenticatedResourceServer {
  id: string
  resource: string | null
}

/**
 * Introspection authenticates every call; the secret hash and resource of a known server are kept
 * in memory this long (a cache age on the monotonic clock, not domain time), so the hot path is one
 * query, not two. A disabled server, or a changed resource, takes effect within this age on each
 * instance. Unknown ids are never cached, and the cache is bounded.
 */
const CREDENTIALS_CACHE_MS = 5_000
const CREDENTIALS_CACHE_MAX = 1_000

/**
 * The authorization server's metadata lists the registered resource identifiers (RFC 9728 §4); it
 * is asked for often (every client's discovery) and changes rarely, so the list is read at most this
 * often, and a failed read keeps serving the last list.
 */
const PROTECTED_RESOURCES_CACHE_MS = 30_000

export function createResourceServerService(
  db: Kysely<Database>,
  config: Pick<Config, 'accessTokenAudience'>,
) {
  const cache = new Map<string, ResourceServerCredentials & { at: number }>()
  let protectedResources: { list: string[]; at: number } | undefined
  let refreshing: Promise<string[]> | undefined
  /** Bumped by a registration: a read that began before it must not be kept as fresh. */
  let generation = 0

  async function credentials(id: string): Promise<ResourceServerCredentials | undefined> {
    const cached = cache.get(id)
    if (cached && performance.now() - cached.at < CREDENTIALS_CACHE_MS) return cached
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

  return {
    /**
     * Registers a resource server. The secret (256 random bits) is returned once and stored only as
     * its SHA-256: with that much entropy a slow hash adds nothing, and introspection stays fast.
     * A resource another resource server has → 409.
     */
    async createResourceServer(input: NewResourceServer): Promise<ResourceServer & { secret: string }> {
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
        const server = await insertResourceServer(db, {
          id: newResourceServerId(),
          name: input.name,
          secretHash: sha256(secret),
          resource: input.resource ?? null,
          scopes: normalizeScopes(input.scopes ?? []),
        })
        generation += 1
        protectedResources = undefined
        refreshing = undefined
        return { ...server, secret }
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ProblemError(409, 'resource: another resource server has this resource', 'resource')
        throw err
      }
    },
    listResourceServers: () => listResourceServers(db),
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
      const stored = await credentials(id)
      const matches = constantTimeEqual(
        stored?.secretHash ?? sha256('no such resource server'),
        sha256(secret),
      )
      return matches && stored ? { id, resource: stored.resource } : undefined
    },
  }
}

export type ResourceServerService = ReturnType<typeof createResourceServerService>
