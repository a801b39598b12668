/**
 * The leash on apps nobody vetted (issue 37 part 4): how many writes an application may make for
 * each person in an hour, by its standing (the access token's `client_standing`). Counted in the
 * API's own database, one row per (person, application) holding the current hour's count, so the
 * limit holds across instances; the count is one conditional upsert, so of concurrent writes at the
 * limit exactly one passes.
 */
import { clientStandingOf, type ClientStanding, type SignedAccessTokenClaims } from '@linkauth/resource'
import type { FastifyInstance } from 'fastify'
import { type Kysely, sql } from 'kysely'
import { z } from 'zod'
import { ApiError } from './errors.js'

/** Writes an hour for each person, by standing; null: no limit of the application's own. */
export type AppLimits = Readonly<Record<ClientStanding, number | null>>

export const WINDOW_SECONDS = 3600

/** The table each API's migration makes in its schema. */
export interface AppWriteCountsTable {
  owner_id: string
  client_id: string
  window_start: Date
  count: number
}

export interface AppWriteCountsDatabase {
  app_write_counts: AppWriteCountsTable
}

/** The application making a write for a person: from the verified token. */
export interface WritingApp {
  clientId: string
  standing: ClientStanding
}

/** The app of a verified token (a token without `client_standing` reads as unverified). */
export function writingAppOf(
  claims: Pick<SignedAccessTokenClaims, 'client_id' | 'client_standing'>,
): WritingApp {
  return { clientId: claims.client_id, standing: clientStandingOf(claims) }
}

/** A write of several at once (an import): how many it asked for, and how many were left. */
export interface LimitShortfall {
  asked: number
  remaining: number
  /** The count is a lower bound: the upload was refused before its end. */
  atLeast?: boolean
}

/**
 * 429: the application made as many writes for this person as its standing allows this hour (or
 * asked for more at once than remain). The answer says when to try again (Retry-After, and
 * `retry_after` / `retry_at` in the JSON) and why, so an agent can tell the person and wait,
 * instead of retrying at once.
 */
export class AppLimitReachedError extends ApiError {
  override name = 'AppLimitReachedError'
  readonly code = 'app_limit_reached'
  readonly status = 429
  readonly retryAfterSeconds: number
  readonly details: Record<string, unknown>
  constructor(what: string, app: WritingApp, limit: number, retryAt: Date, now: Date, many?: LimitShortfall) {
    const retryAfter = Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000))
    const allowance = `This application is ${app.standing}: it may make at most ${limit} ${what} an hour for each person`
    const when = `Try again in ${retryAfter} seconds (at ${retryAt.toISOString()}).`
    super(
      (many
        ? `${allowance}, and ${many.remaining} ${many.remaining === 1 ? 'remains' : 'remain'} this hour; ` +
          `this import has ${many.atLeast ? `more than ${many.remaining}` : many.asked} new rows. ` +
          (many.asked > limit
            ? `Split it into files of at most ${limit} rows, one an hour. ${when} `
            : `${when} `)
        : `${allowance}, and has made them this hour. ${when} `) +
        'Applications the operator verifies are not limited this way.',
    )
    this.retryAfterSeconds = retryAfter
    this.details = {
      retry_after: retryAfter,
      retry_at: retryAt.toISOString(),
      limit,
      window_seconds: WINDOW_SECONDS,
      client_standing: app.standing,
      ...(many ? { remaining: many.remaining } : {}),
    }
  }
}

const NOTHING_TO_TAKE_BACK = () => Promise.resolve()

/** The start of the fixed hour `now` is in. */
export function windowStartOf(now: Date): Date {
  return new Date(Math.floor(now.getTime() / (WINDOW_SECONDS * 1000)) * WINDOW_SECONDS * 1000)
}

export interface AppLeash<DB extends AppWriteCountsDatabase = AppWriteCountsDatabase> {
  /**
   * Counts one write of `app` for `ownerId`, or throws AppLimitReachedError when its standing's
   * limit is reached this hour. Returns how to take it back (a write that then failed).
   */
  charge(ownerId: string, app: WritingApp): Promise<() => Promise<void>>
  /**
   * Counts `count` writes at once, all or none (AppLimitReachedError when fewer remain this hour),
   * in `db` (a transaction of the caller's, or the leash's own). Returns the hour they were counted
   * in, to give back those not made with giveBack; null when the standing has no limit.
   */
  chargeMany(ownerId: string, app: WritingApp, count: number, db?: Kysely<DB>): Promise<Date | null>
  /** How many writes `app` may still make for `ownerId` this hour; null: no limit. */
  remaining(ownerId: string, app: WritingApp): Promise<number | null>
  /**
   * The refusal of a write when none remain, or of `asked` at once when fewer remain (an upload
   * refused before its end).
   */
  refusal(app: WritingApp, shortfall?: LimitShortfall): AppLimitReachedError
}

/** The counted writes of an hour, by person and application: what giveBack takes from. */
export interface ChargedWrites {
  ownerId: string
  clientId: string
  windowStart: Date
}

/**
 * Takes `count` writes counted in `charged.windowStart` back off the count (writes that were not
 * made after all); nothing once that hour has passed (its count started again).
 */
export async function giveBack<DB extends AppWriteCountsDatabase>(
  db: Kysely<DB>,
  charged: ChargedWrites,
  count: number,
): Promise<void> {
  if (count <= 0) return
  await (db as unknown as Kysely<AppWriteCountsDatabase>)
    .updateTable('app_write_counts')
    .set({ count: sql`greatest(count - ${count}, 0)` })
    .where('owner_id', '=', charged.ownerId)
    .where('client_id', '=', charged.clientId)
    .where('window_start', '=', charged.windowStart)
    .where('count', '>', 0)
    .execute()
}

export function createAppLeash<DB extends AppWriteCountsDatabase>(deps: {
  /** The API's database, whose schema has app_write_counts. */
  db: Kysely<DB>
  clock: { now(): Date }
  limits: AppLimits
  /** What is counted, plural, for the message: "new links", "writes". */
  what: string
}): AppLeash<DB> {
  const { clock, limits } = deps
  const own = deps.db as unknown as Kysely<AppWriteCountsDatabase>
  const hourOf = (now: Date) => {
    const windowStart = windowStartOf(now)
    return { windowStart, retryAt: new Date(windowStart.getTime() + WINDOW_SECONDS * 1000) }
  }

  async function chargeMany(
    ownerId: string,
    app: WritingApp,
    count: number,
    trx?: Kysely<DB>,
  ): Promise<Date | null> {
    const limit = limits[app.standing]
    if (limit === null) return null
    const now = clock.now()
    const { windowStart, retryAt } = hourOf(now)
    const refused = async () => {
      if (count === 1) return new AppLimitReachedError(deps.what, app, limit, retryAt, now)
      const left = await leash.remaining(ownerId, app)
      return new AppLimitReachedError(deps.what, app, limit, retryAt, now, {
        asked: count,
        remaining: left ?? 0,
      })
    }
    if (count > limit) throw await refused()
    const db = (trx ?? deps.db) as unknown as Kysely<AppWriteCountsDatabase>
    // One statement: a new hour starts the count again; within the hour the row is updated only
    // while the writes fit under the limit. ON CONFLICT locks the row, so concurrent charges queue
    // on it and each sees the count the one before it left: at the limit, exactly one passes.
    const row = await db
      .insertInto('app_write_counts')
      .values({ owner_id: ownerId, client_id: app.clientId, window_start: windowStart, count })
      .onConflict((oc) =>
        oc
          .columns(['owner_id', 'client_id'])
          .doUpdateSet({
            count: sql`case when excluded.window_start > app_write_counts.window_start then ${count}
                            else app_write_counts.count + ${count} end`,
            window_start: sql`greatest(excluded.window_start, app_write_counts.window_start)`,
          })
          .where((eb) =>
            eb.or([
              eb(sql.ref('excluded.window_start'), '>', sql.ref('app_write_counts.window_start')),
              eb(sql.ref('app_write_counts.count'), '<=', limit - count),
            ]),
          ),
      )
      .returning(['window_start'])
      .executeTakeFirst()
    if (!row) throw await refused()
    return row.window_start
  }

  const leash: AppLeash<DB> = {
    async charge(ownerId, app) {
      const windowStart = await chargeMany(ownerId, app, 1)
      if (windowStart === null) return NOTHING_TO_TAKE_BACK
      return () => giveBack(own, { ownerId, clientId: app.clientId, windowStart }, 1)
    },
    chargeMany,
    async remaining(ownerId, app) {
      const limit = limits[app.standing]
      if (limit === null) return null
      const row = await own
        .selectFrom('app_write_counts')
        .select('count')
        .where('owner_id', '=', ownerId)
        .where('client_id', '=', app.clientId)
        .where('window_start', '=', hourOf(clock.now()).windowStart)
        .executeTakeFirst()
      return Math.max(0, limit - (row?.count ?? 0))
    },
    refusal(app, shortfall) {
      const now = clock.now()
      const limit = limits[app.standing] ?? 0
      return new AppLimitReachedError(deps.what, app, limit, hourOf(now).retryAt, now, shortfall)
    },
  }
  return leash
}

/** One limit setting: a whole number of writes an hour, or `none` (or empty) for no limit. */
const limitSetting = (fallback: number | null) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback
      if (v === 'none') return null
      const n = Number(v)
      if (!Number.isSafeInteger(n) || n < 0 || n > 1_000_000) {
        ctx.addIssue({ code: 'custom', message: 'a whole number of writes an hour (0 to 1000000), or none' })
        return z.NEVER
      }
      return n
    })

/**
 * The settings `${prefix}_APP_LIMIT_UNVERIFIED`, `_VOUCHED` and `_VERIFIED`: spread them into the
 * API's environment schema, and read them back with appLimitsOf.
 */
export function appLimitSettings<P extends string>(prefix: P, defaults: AppLimits) {
  return {
    [`${prefix}_APP_LIMIT_UNVERIFIED`]: limitSetting(defaults.unverified),
    [`${prefix}_APP_LIMIT_VOUCHED`]: limitSetting(defaults.vouched),
    [`${prefix}_APP_LIMIT_VERIFIED`]: limitSetting(defaults.verified),
  } as Record<`${P}_APP_LIMIT_${'UNVERIFIED' | 'VOUCHED' | 'VERIFIED'}`, ReturnType<typeof limitSetting>>
}

export function appLimitsOf<P extends string>(
  prefix: P,
  parsed: Record<`${P}_APP_LIMIT_${'UNVERIFIED' | 'VOUCHED' | 'VERIFIED'}`, number | null>,
): AppLimits {
  return Object.freeze({
    unverified: parsed[`${prefix}_APP_LIMIT_UNVERIFIED`],
    vouched: parsed[`${prefix}_APP_LIMIT_VOUCHED`],
    verified: parsed[`${prefix}_APP_LIMIT_VERIFIED`],
  })
}

/** The defaults of issue 37: unverified 50 an hour for each person, vouched 500, verified none. */
export const DEFAULT_APP_LIMITS: AppLimits = Object.freeze({ unverified: 50, vouched: 500, verified: null })

declare module 'fastify' {
  interface FastifyRequest {
    /** Takes back the write the leash counted for this request (set by leashWrites). */
    appWriteTakeBack?: (() => Promise<void>) | undefined
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Counts every write request a token makes (any method but GET, HEAD and OPTIONS, on a route that
 * verified a token) against the leash, before its handler runs; a write answered with an error is
 * taken back off the count. For an API whose every write is worth limiting (the commerce API).
 */
export function leashWrites(app: FastifyInstance, leash: Pick<AppLeash, 'charge'>): void {
  app.addHook('preHandler', async (request) => {
    if (READS.has(request.method) || !request.auth) return
    request.appWriteTakeBack = await leash.charge(request.auth.sub, writingAppOf(request.auth))
  })
  app.addHook('onResponse', async (request, reply) => {
    if (request.appWriteTakeBack && reply.statusCode >= 400) await request.appWriteTakeBack().catch(() => {})
  })
}
