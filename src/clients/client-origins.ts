import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { listEnabledRedirectUris } from './client.repository.js'
import { originKey, redirectUriOrigin } from './redirect-uri.js'

/** How long a snapshot is trusted: how late a client disabled on another instance loses CORS here. */
const MAX_AGE_MS = 60_000
/**
 * An origin or client missing from a snapshot older than this reads the table again, so a client
 * registered on another instance works here at its first request; a flood of made-up origins costs
 * at most one read a second.
 */
const MISS_REFRESH_FLOOR_MS = 1_000

export interface ClientOriginsOptions {
  maxAgeMs?: number
  missRefreshFloorMs?: number
  /** Milliseconds on a monotonic clock. */
  now?: () => number
}

interface Snapshot {
  originsByClient: Map<string, Set<string>>
  allOrigins: Set<string>
  loadedAt: number
}

/**
 * The origins of enabled clients' redirect URIs, for CORS (web/cors.ts), held in memory so that a
 * browser's request costs no query: the whole table's enabled redirect URIs, read again after
 * MAX_AGE_MS, on a miss (at most every MISS_REFRESH_FLOOR_MS), and at once after a client is created
 * or disabled through this process (`invalidate`).
 */
export function createClientOrigins(db: Kysely<Database>, options: ClientOriginsOptions = {}) {
  const maxAgeMs = options.maxAgeMs ?? MAX_AGE_MS
  const floorMs = options.missRefreshFloorMs ?? MISS_REFRESH_FLOOR_MS
  const now = options.now ?? (() => performance.now())
  let snapshot: Snapshot | undefined
  // Bumped by invalidate(): a read that began before the change must not count as fresh after it.
  let generation = 0
  let loadedGeneration = -1
  let loading: { generation: number; promise: Promise<Snapshot> } | undefined

  function build(clients: { id: string; redirectUris: string[] }[]): Snapshot {
    const originsByClient = new Map<string, Set<string>>()
    const allOrigins = new Set<string>()
    for (const client of clients) {
      const origins = new Set<string>()
      for (const uri of client.redirectUris) {
        const target = redirectUriOrigin(uri)
        if (!target || !('web' in target)) continue
        // A loopback origin is kept without its port: it matches on any port (RFC 8252 §7.3).
        origins.add(originKey(target.web))
        allOrigins.add(originKey(target.web))
      }
      originsByClient.set(client.id, origins)
    }
    return { originsByClient, allOrigins, loadedAt: now() }
  }

  /** Reads the table; concurrent callers of one generation share the read. */
  function load(): Promise<Snapshot> {
    if (loading?.generation === generation) return loading.promise
    const started = generation
    const promise = listEnabledRedirectUris(db)
      .then((clients) => {
        const read = build(clients)
        if (started >= loadedGeneration) {
          snapshot = read
          loadedGeneration = started
        }
        return read
      })
      .finally(() => {
        if (loading?.promise === promise) loading = undefined
      })
    loading = { generation: started, promise }
    return promise
  }

  async function current(): Promise<Snapshot> {
    if (!snapshot || loadedGeneration !== generation || now() - snapshot.loadedAt >= maxAgeMs) return load()
    return snapshot
  }

  /** Finds something in the snapshot; when it is missing from one older than the floor, reads again once. */
  async function lookup<T>(find: (s: Snapshot) => T | undefined): Promise<T | undefined> {
    const s = await current()
    const found = find(s)
    if (found !== undefined || now() - s.loadedAt < floorMs) return found
    return find(await load())
  }

  return {
    /** Whether some enabled client has a redirect URI at this origin (all a preflight can ask). */
    async isRegisteredOrigin(origin: string): Promise<boolean> {
      const key = originKey(origin)
      return (await lookup((s) => (s.allOrigins.has(key) ? true : undefined))) === true
    },
    /** Whether the origin is one of this enabled client's redirect origins; undefined: no such enabled client. */
    async isOriginOf(origin: string, clientId: string): Promise<boolean | undefined> {
      return (await lookup((s) => s.originsByClient.get(clientId)))?.has(originKey(origin))
    },
    /** A client was created or disabled here: the next lookup reads the table. */
    invalidate(): void {
      generation++
    },
  }
}

export type ClientOrigins = ReturnType<typeof createClientOrigins>
