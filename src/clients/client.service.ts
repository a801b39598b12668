import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Database } from '../db/database.js'
import { ProblemError } from '../errors.js'
import type { GrantService } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import { ALL_SCOPES, isKnownScope, normalizeScopes } from '../lib/scopes.js'
import { isClientId, newClientId } from '../lib/identifiers.js'
import { createClientOrigins } from './client-origins.js'
import { type Client, disableClient, findClientById, insertClient, listClients } from './client.repository.js'
import { redirectUriProblem } from './redirect-uri.js'

export type { Client }

export const newClientSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  redirect_uris: z
    .array(
      z.string().superRefine((uri, ctx) => {
        const problem = redirectUriProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      }),
      'a list of redirect URIs',
    )
    .min(1, 'at least one redirect URI')
    .max(10, 'at most 10 redirect URIs')
    .refine((uris) => new Set(uris).size === uris.length, 'must not repeat a redirect URI'),
  scopes: z
    .array(
      z.string().refine(isKnownScope, { error: `unknown scope; known scopes: ${ALL_SCOPES.join(', ')}` }),
      'a list of scopes',
    )
    .min(1, 'at least one scope')
    .optional(),
})

export type NewClient = z.output<typeof newClientSchema>

export function createClientService(db: Kysely<Database>, clock: Clock, grants: GrantService) {
  const origins = createClientOrigins(db)
  return {
    async createClient(input: NewClient): Promise<Client> {
      const client = await insertClient(db, {
        id: newClientId(),
        name: input.name,
        redirectUris: input.redirect_uris,
        scopes: normalizeScopes(input.scopes ?? ALL_SCOPES),
      })
      origins.invalidate()
      return client
    },
    /** CORS (web/cors.ts): the origins of enabled clients' redirect URIs, from memory. */
    isRegisteredOrigin: origins.isRegisteredOrigin,
    isOriginOf: origins.isOriginOf,
    listClients: () => listClients(db),
    async getClient(id: string): Promise<Client> {
      const client = await findClientById(db, id)
      if (!client) throw new ProblemError(404, 'No client with this id.')
      return client
    },
    /**
     * A client that exists and is not disabled, or undefined. An id of another shape is no client of
     * ours and never reaches a query (a NUL byte would make PostgreSQL fail the statement: a 500).
     */
    async findActiveClient(id: string): Promise<Client | undefined> {
      if (!isClientId(id)) return undefined
      const client = await findClientById(db, id)
      return client && client.disabledAt === null ? client : undefined
    },
    /** Disables a client and revokes all its grants, in one transaction. */
    async disableClient(id: string): Promise<Client> {
      const client = await db.transaction().execute(async (trx) => {
        const client = await disableClient(trx, id, clock.now())
        if (!client) throw new ProblemError(404, 'No client with this id.')
        await grants.revokeAllForClient(id, trx)
        return client
      })
      origins.invalidate()
      return client
    },
  }
}

export type ClientService = ReturnType<typeof createClientService>
