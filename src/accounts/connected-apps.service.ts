import type { RequestFacts } from '../audit/audit.service.js'
import type { AuditService } from '../audit/audit.service.js'
import type { AppDisplay, ClientMetadata, ClientService } from '../clients/client.service.js'
import { isClientId } from '../lib/identifiers.js'
import type { GrantService } from '../grants/grant.service.js'
import type { ResourceServerService, ResourceTarget } from '../resource-servers/resource-server.service.js'
import { describeScope, normalizeScopes } from '../lib/scopes.js'

/** An application the user has authorized, as the account page and its JSON show it. */
export interface ConnectedApp {
  clientId: string
  /** The name to show (a borrowed self-declared name shows as the host: standing.ts). */
  name: string
  /** Name, host, standing and label, as every page shows the app. */
  display: AppDisplay
  /**
   * It holds a live token now (a refresh token or an unexpired access token). False: it is signed
   * out, and may sign in again without asking until the user removes it (removing forgets the consent).
   */
  connected: boolean
  scopes: { scope: string; description: string }[]
  /** The APIs (RFC 8707 resources) the user consented to: none means the service's default audience. */
  resources: { resource: string; name: string }[]
  /** The description and links the operator registered for it. */
  about: ClientMetadata
  /** When the user first authorized it (the grant's creation). */
  authorizedAt: Date
  /** When it last exchanged a code or refreshed a token; null when never. */
  lastUsedAt: Date | null
  /** Allowed with a device code (RFC 8628): it runs on another device, not in the browser. */
  onAnotherDevice: boolean
}

/** One line of the user's own history on the account page: what happened to their access, when. */
export interface AccountEvent {
  at: Date
  type: string
  /** The application's name (a disabled one's too); undefined for events of no application. */
  appName: string | undefined
  /** How the application is shown (name, host, standing), when it still exists. */
  app?: AppDisplay | undefined
  /** Why a grant ended: user_revoked, client_disabled, … */
  reason: string | undefined
  scopes: string[]
  /** A passkey's name, for passkey events. */
  name?: string | undefined
}

/** The user's side of grants: list the connected applications and disconnect one (effective at once). */
export function createConnectedAppsService(
  grants: Pick<GrantService, 'listLiveGrantsOfUser' | 'revokeForUser' | 'hadRevokedGrant'>,
  clients: Pick<ClientService, 'findActiveClient' | 'getClient' | 'displaysOf'>,
  resourceServers: Pick<ResourceServerService, 'findTargets'>,
  audit?: Pick<AuditService, 'historyOfUser'>,
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
      const displays = await clients.displaysOf(
        live.map((g) => ({ id: g.clientId, name: g.clientName, ...g.client })),
      )
      return live.map((g, i) => ({
        clientId: g.clientId,
        name: displays[i]!.name,
        display: displays[i]!,
        connected: g.connected,
        about: g.clientMetadata,
        scopes: normalizeScopes(g.scopes).map((scope) => ({ scope, description: describeScope(scope) })),
        resources: g.resources.map((resource) => ({
          resource,
          name: targets.get(resource)?.name ?? resource,
        })),
        authorizedAt: g.createdAt,
        lastUsedAt: g.lastUsedAt,
        onAnotherDevice: g.onAnotherDevice,
      }))
    },

    /**
     * Revokes the user's grant to the client with every refresh family under it, in one transaction:
     * from the next request on its tokens neither refresh nor introspect active, and the next
     * authorization asks for consent again. False when the user had no live grant to it.
     */
    revoke(userId: string, clientId: string, from?: RequestFacts): Promise<boolean> {
      if (!isClientId(clientId)) return Promise.resolve(false)
      return grants.revokeForUser(userId, clientId, from)
    },

    /** The user's consents, revocations and password changes, newest first (at most `limit`). */
    async history(userId: string, limit = 20): Promise<AccountEvent[]> {
      const rows = (await audit?.historyOfUser(userId, limit)) ?? []
      const ids = new Set(rows.flatMap((r) => (r.clientId ? [r.clientId] : [])))
      // A handful of distinct applications at most (one page of history): one primary-key read each.
      const found = (
        await Promise.all([...ids].map((id) => clients.getClient(id).catch(() => undefined)))
      ).filter((c) => c !== undefined)
      const shown = await clients.displaysOf(found)
      const displays = new Map(found.map((c, i) => [c.id, shown[i]!] as const))
      return rows.map((r) => ({
        at: r.occurredAt,
        type: r.eventType,
        appName: r.clientId ? (displays.get(r.clientId)?.name ?? r.clientId) : undefined,
        app: r.clientId ? displays.get(r.clientId) : undefined,
        reason: typeof r.details.reason === 'string' ? r.details.reason : undefined,
        scopes: Array.isArray(r.details.scopes) ? (r.details.scopes as string[]) : [],
        name: typeof r.details.name === 'string' ? r.details.name : undefined,
      }))
    },

    /**
     * The name of an application whose grant this user had and that is now revoked, for "you
     * revoked access for X"; undefined for any other (a link naming another registered app says nothing).
     */
    async revokedAppName(userId: string, clientId: string): Promise<string | undefined> {
      if (!isClientId(clientId) || !(await grants.hadRevokedGrant(userId, clientId))) return undefined
      return (await clients.findActiveClient(clientId))?.name
    },
  }
}

export type ConnectedAppsService = ReturnType<typeof createConnectedAppsService>
