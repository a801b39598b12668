import type { Kysely } from 'kysely'
import type { CommerceDatabase } from '../db/database.js'
import { ConversionConflictError, InvalidRequestError, NotFoundError, UnprocessableError } from '../errors.js'
import type { NewConversion } from './conversion-input.js'
import { type Conversion, findConversion, findOwnedClick, insertConversion } from './conversion.repository.js'

export type { Conversion }

/** A conversion may be reported with a time up to this far ahead of our clock (clock skew). */
const FUTURE_SKEW_MS = 5 * 60_000

/**
 * Conversions: one per order of a user (idempotent by order id), each on a click of one of the
 * user's own links.
 */
export function createConversionService({
  db,
  clock,
}: {
  db: Kysely<CommerceDatabase>
  clock: { now(): Date }
}) {
  return {
    /** The conversion, and whether it was recorded now (false: the same report came before). */
    async report(
      ownerId: string,
      input: NewConversion,
    ): Promise<{ conversion: Conversion; created: boolean }> {
      const now = clock.now()
      if (input.occurredAt && input.occurredAt.getTime() > now.getTime() + FUTURE_SKEW_MS)
        throw new InvalidRequestError('occurred_at: must not be in the future', 400, '/occurred_at')
      const click = await findOwnedClick(db, ownerId, input.clickId)
      if (!click)
        throw new UnprocessableError(
          'unknown_click',
          '/click_id',
          'click_id: no click on any of your links has this id (it is the lclid parameter the redirect added)',
        )
      const inserted = await insertConversion(db, {
        ownerId,
        orderId: input.orderId,
        clickId: click.id,
        linkId: click.link_id,
        valueMinor: input.valueMinor,
        currency: input.currency,
        occurredAt: input.occurredAt ?? now,
        now,
      })
      if (inserted) return { conversion: inserted, created: true }
      const existing = (await findConversion(db, ownerId, input.orderId))!
      const differs = [
        ...(existing.clickId !== input.clickId ? ['click_id'] : []),
        ...(existing.valueMinor !== input.valueMinor ? ['value'] : []),
        ...(existing.currency !== input.currency ? ['currency'] : []),
        // A report without a time takes the first one's.
        ...(input.occurredAt && existing.occurredAt.getTime() !== input.occurredAt.getTime()
          ? ['occurred_at']
          : []),
      ]
      if (differs.length > 0) throw new ConversionConflictError(input.orderId, differs)
      return { conversion: existing, created: false }
    },

    async get(ownerId: string, orderId: string): Promise<Conversion> {
      const conversion = await findConversion(db, ownerId, orderId)
      if (!conversion) throw new NotFoundError('No conversion of yours has this order_id.')
      return conversion
    },
  }
}

export type ConversionService = ReturnType<typeof createConversionService>
