/**
 * The operator's changes to the registry of resource servers: register, change, disable or enable,
 * delete, rotate the secret. Each runs in one transaction with its audit record, then tells the
 * instance's caches (`changed`). Plain functions over explicit dependencies; the service wires them.
 */
import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import {
  type AuditDetails,
  type AuditEventType,
  type AuditRecorder,
  OPERATOR,
  type RequestFacts,
} from '../audit/audit.service.js'
import { isUniqueViolation } from '../db/errors.js'
import { ProblemError } from '../errors.js'
import type { GrantService, ResourceForgotten } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isCallerIdShape, newResourceServerId, newSecret } from '../lib/identifiers.js'
import { normalizeScopes } from '../lib/scopes.js'
import { sha256 } from '../lib/secrets.js'
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  type NewResourceServer,
  type ResourceServerUpdate,
} from './resource-server.schemas.js'
import {
  deleteResourceServer,
  findResourceServer,
  insertResourceServer,
  lockResourceServer,
  replaceResourceServerSecret,
  type ResourceServer,
  setResourceServerDisabled,
  updateResourceServer,
} from './resource-server.repository.js'

export interface RegistryChangeDeps {
  db: Kysely<Database>
  config: Pick<Config, 'accessTokenAudience'>
  clock: Clock
  grants: Pick<GrantService, 'forgetResource'>
  audit: AuditRecorder
  /** A resource server changed here: this instance forgets what it kept about it. */
  changed(id: string): void
}

/** One resource server (never its secret); unknown id → 404. */
export async function existingResourceServer(db: Kysely<Database>, id: string): Promise<ResourceServer> {
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
  audit: AuditRecorder,
  trx: Kysely<Database>,
  type: Extract<AuditEventType, `resource_server.${string}`>,
  id: string,
  details: AuditDetails,
  from: RequestFacts | undefined,
) => audit.record(trx, { type, actor: OPERATOR, target: { kind: 'resource_server', id }, details, from })

/**
 * Registers a resource server. The secret (256 random bits) is returned once and stored only as
 * its SHA-256: with that much entropy a slow hash adds nothing, and introspection stays fast.
 * A resource another resource server has → 409.
 */
export async function registerResourceServer(
  { db, config, audit, changed }: RegistryChangeDeps,
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
}

/**
 * Renames it or changes the scopes it serves (only one with a resource serves scopes). Tokens
 * issued from now on follow; tokens already issued keep their scope until they expire.
 */
export async function changeResourceServer(
  { db, audit, changed }: RegistryChangeDeps,
  id: string,
  patch: ResourceServerUpdate,
  from?: RequestFacts,
): Promise<ResourceServer> {
  const server = await existingResourceServer(db, id)
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
      audit,
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
}

/**
 * Disables (at `now`) or enables (null) it, recording the change when there is one: asking for the
 * state it is in changes nothing and records nothing. Unknown id → 404.
 */
export async function setDisabled(
  { db, audit, changed }: RegistryChangeDeps,
  id: string,
  now: Date | null,
  from?: RequestFacts,
): Promise<ResourceServer> {
  if (!isCallerIdShape(id)) throw new ProblemError(404, 'No resource server with this id.')
  const server = await db.transaction().execute(async (trx) => {
    const before = orNotFound(await lockResourceServer(trx, id))
    if ((before.disabledAt === null) === (now === null)) return before
    const after = orNotFound(await setResourceServerDisabled(trx, id, now))
    await recordChange(
      audit,
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

/**
 * Deletes it, in one transaction with what was granted for its resource: refresh families whose
 * authorization named it are revoked (announced on the feed), grants forget it, unredeemed codes
 * for it expire (GrantService.forgetResource). So nothing issued for it can come back if its
 * identifier is registered again. Unknown id → 404.
 */
export async function removeResourceServer(
  { db, grants, audit, changed }: RegistryChangeDeps,
  id: string,
  from?: RequestFacts,
): Promise<{ server: ResourceServer; forgotten: ResourceForgotten | undefined }> {
  if (!isCallerIdShape(id)) throw new ProblemError(404, 'No resource server with this id.')
  const result = await db.transaction().execute(async (trx) => {
    const server = orNotFound(await deleteResourceServer(trx, id))
    const forgotten = server.resource === null ? undefined : await grants.forgetResource(server.resource, trx)
    await recordChange(
      audit,
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
}

/**
 * A new secret (256 random bits), returned once and stored as its SHA-256. The old one keeps
 * working for `overlapSeconds` (0: stops at once), so the API can switch without downtime;
 * a secret replaced by an earlier rotation stops now. Unknown id → 404.
 */
export async function rotateSecret(
  { db, clock, audit, changed }: RegistryChangeDeps,
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
      audit,
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
}
