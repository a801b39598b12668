import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { listEnabledResources } from './resource-server.repository.js'

/**
 * The authorization server's metadata lists the registered resource identifiers (RFC 9728 §4); it
 * is asked for often (every client's discovery) and changes rarely, so the list is read at most this
 * often, and a failed read keeps serving the last list.
 */
const PROTECTED_RESOURCES_CACHE_MS = 30_000

/** RFC 9728 §4 `protected_resources` as this instance keeps it. */
export interface ProtectedResourcesCache {
  /** The identifiers of the enabled resource servers. */
  list(): Promise<string[]>
  /** A registration changed here: the next call reads the list again. */
  invalidate(): void
}

export function createProtectedResourcesCache(db: Kysely<Database>): ProtectedResourcesCache {
  let protectedResources: { list: string[]; at: number } | undefined
  let refreshing: Promise<string[]> | undefined
  /** Bumped by a registration: a read that began before it must not be kept as fresh. */
  let generation = 0

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
    async list() {
      if (protectedResources && performance.now() - protectedResources.at < PROTECTED_RESOURCES_CACHE_MS)
        return protectedResources.list
      return refreshProtectedResources()
    },
    invalidate() {
      generation += 1
      protectedResources = undefined
      refreshing = undefined
    },
  }
}
