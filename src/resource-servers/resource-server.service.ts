import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import type { GrantService, ResourceForgotten } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import { createProtectedResourcesCache } from './protected-resources.js'
import {
  type AuthenticatedResourceServer,
  checkResourceServerSecret,
  createCredentialsCache,
} from './resource-server-credentials.js'
import {
  changeResourceServer,
  existingResourceServer,
  registerResourceServer,
  type RegistryChangeDeps,
  removeResourceServer,
  rotateSecret,
  setDisabled,
} from './resource-server-changes.js'
import type { NewResourceServer, ResourceServerUpdate } from './resource-server.schemas.js'
import {
  findResourceTargets,
  listResourceServers,
  type ResourceServer,
  type ResourceTarget,
} from './resource-server.repository.js'

export type { AuthenticatedResourceServer, ResourceForgotten, ResourceServer, ResourceTarget }

/**
 * The registry of resource APIs, wired: the operator's changes (resource-server-changes.ts), the
 * credentials check of introspection and the feed (resource-server-credentials.ts) and the
 * metadata's `protected_resources` (protected-resources.ts), with the caches of this instance that
 * a change here clears at once.
 */
export function createResourceServerService(
  db: Kysely<Database>,
  config: Pick<Config, 'accessTokenAudience'>,
  clock: Clock,
  grants: Pick<GrantService, 'forgetResource'>,
  audit: AuditRecorder = NO_AUDIT,
) {
  const credentials = createCredentialsCache(db)
  const protectedResources = createProtectedResourcesCache(db)
  const deps: RegistryChangeDeps = {
    db,
    config,
    clock,
    grants,
    audit,
    changed(id) {
      credentials.forget(id)
      protectedResources.invalidate()
    },
  }

  return {
    /** See registerResourceServer: the secret is returned once; a resource taken → 409. */
    createResourceServer: (
      input: NewResourceServer,
      from?: RequestFacts,
    ): Promise<ResourceServer & { secret: string }> => registerResourceServer(deps, input, from),
    listResourceServers: () => listResourceServers(db),
    /** One resource server (never its secret); unknown id → 404. */
    getResourceServer: (id: string): Promise<ResourceServer> => existingResourceServer(db, id),
    /** Renames it or changes the scopes it serves (changeResourceServer). */
    updateResourceServer: (
      id: string,
      patch: ResourceServerUpdate,
      from?: RequestFacts,
    ): Promise<ResourceServer> => changeResourceServer(deps, id, patch, from),
    /**
     * Disables it: its calls to introspection and the event feed get 401 (at once on this instance,
     * within CREDENTIALS_CACHE_MS on others), no token is issued for its resource any more (the token
     * endpoint reads the registry uncached), and it leaves `protected_resources`. Grants naming it
     * stay, so enabling it again restores it. Idempotent; unknown id → 404.
     */
    disableResourceServer: (id: string, from?: RequestFacts): Promise<ResourceServer> =>
      setDisabled(deps, id, clock.now(), from),
    /** Enables it again, with its secret, resource and scopes as they were. Idempotent; unknown id → 404. */
    enableResourceServer: (id: string, from?: RequestFacts): Promise<ResourceServer> =>
      setDisabled(deps, id, null, from),
    /** Deletes it with what was granted for its resource (removeResourceServer). Unknown id → 404. */
    deleteResourceServer: (
      id: string,
      from?: RequestFacts,
    ): Promise<{ server: ResourceServer; forgotten: ResourceForgotten | undefined }> =>
      removeResourceServer(deps, id, from),
    /** A new secret, returned once; the old one works for `overlapSeconds` (rotateSecret). */
    rotateSecret: (
      id: string,
      overlapSeconds?: number,
      from?: RequestFacts,
    ): Promise<ResourceServer & { secret: string }> => rotateSecret(deps, id, overlapSeconds, from),
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
    protectedResources: (): Promise<string[]> => protectedResources.list(),
    /** The enabled resource server with this id, when its secret matches (constant-time). */
    authenticate: (id: string, secret: string): Promise<AuthenticatedResourceServer | undefined> =>
      checkResourceServerSecret({ clock, credentials }, id, secret),
  }
}

export type ResourceServerService = ReturnType<typeof createResourceServerService>
