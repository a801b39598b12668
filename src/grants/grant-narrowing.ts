import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import { type ClientNarrowing, NARROWED_REASON, narrowClientGrants } from './grant-narrowing.repository.js'
import { type GrantRevocationDeps, recordRevoked } from './grant-revocation.js'

/**
 * The operator narrowed a client's scopes or removed redirect URIs: what was granted beyond the new
 * registration stops working at once (see narrowClientGrants), with a grant.revoked row for each
 * grant that ended. Inside the caller's transaction, which holds the client's row lock.
 */
export async function narrowForClient(
  deps: GrantRevocationDeps,
  clientId: string,
  remainingScopes: readonly string[],
  removedRedirectUris: readonly string[],
  trx: Kysely<Database>,
  from: RequestFacts | undefined,
): Promise<ClientNarrowing> {
  const done = await narrowClientGrants(trx, clientId, remainingScopes, removedRedirectUris, deps.clock.now())
  await recordRevoked(deps, trx, done.grantsRevoked, OPERATOR, NARROWED_REASON, from)
  deps.metricHooks.revoked?.('grant', done.grantsRevoked.length)
  return done
}
