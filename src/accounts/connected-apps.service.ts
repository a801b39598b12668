import type { ClientService } from '../clients/client.service.js'
import { isClientId } from '../lib/identifiers.js'
import type { GrantService } from '../grants/grant.service.js'
import type { ResourceServerService, ResourceTarget } from '../resource-servers/resource-server.service.js'
import { describeScope, normalizeScopes } from '../lib/scopes.js'

/** An application the user has authorized, as the account page and its JSON show it. */
export interface ConnectedApp {
  clientId: string
  name: string
  scopes: { scope: string; description: string }[]
  /** The APIs (RFC 8707 resources) the user consented to: none means the service's default audience. */
  resources: { resource: string; name: string }[]
  /** When the user first authorized it (the grant's creation). */
  authorizedAt: Date
  /** When it last exchanged a code or refreshed a token; null when never. */
  lastUsedAt: Date | null
}

/** The user's side of grants: list the connected applications and disconnect one (effective at once). */
export function createConnectedAppsService(
  grants: Pick<GrantService, 'listLiveGrantsOfUser' | 'revokeForUser'>,
  clients: Pick<ClientService, 'findActiveClient'>,
  resourceServers: Pick<ResourceServerService, 'findTargets'>,
) {
  return {
    async list(userId: string): Promise<ConnectedApp[]> {
      const live = await grants.listLiveGrantsOfUser(userId)
      const resources = [...new Set(live.flatMap((g) => g.resources))]
      // A disabled API keeps its place under its identifier: the consent still stands.
      const targets =
        resources.length > 0
          ? await resourceServers.findTargets(resources)
          : new Map<string, ResourceTarget>()
      return live.map((g) => ({
        clientId: g.clientId,
        name: g.clientName,
        scopes: normalizeScopes(g.scopes).map((scope) => ({ scope, description: describeScope(scope) })),
        resources: g.resources.map((resource) => ({
          resource,
          name: targets.get(resource)?.name ?? resource,
        })),
        authorizedAt: g.createdAt,
        lastUsedAt: g.lastUsedAt,
      }))
    },

    /**
     * Revokes the user's grant to the client with every refresh family under it, in one transaction:
     * from the next request on its tokens neither refresh nor introspect active, and the next
     * authorization asks for consent again. False when the user had no live grant to it.
     */
    revoke(userId: string, clientId: string): Promise<boolean> {
      if (!isClientId(clientId)) return Promise.resolve(false)
      return grants.revokeForUser(userId, clientId)
    },

    /** The name of an application, for "you disconnected X"; undefined when there is none. */
    async appName(clientId: string): Promise<string | undefined> {
      if (!isClientId(clientId)) return undefined
      return (await clients.findActiveClient(clientId))?.name
    },
  }
}

export type ConnectedAppsService = ReturnType<typeof createConnectedAppsService>
