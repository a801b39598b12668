import { z } from 'zod'
import { readAmount } from '../money/amount-input.js'
import { BODY, currency, decimalString, instant, minorUnits, ruled, shopId } from '../web/input.js'
import { CLICK_ID } from '../links/link.repository.js'

/** What POST /api/conversions accepts: the click id from the redirect, the shop's order id, its value. */
export const newConversionSchema = z
  .strictObject(
    {
      click_id: ruled((v) =>
        CLICK_ID.test(v) ? undefined : 'must be the click id (lclid) the redirect added: 22 characters',
      ),
      order_id: shopId,
      value: decimalString.optional(),
      value_minor: minorUnits.optional(),
      currency,
      occurred_at: instant.optional(),
    },
    BODY,
  )
  .transform((c, ctx) => {
    const valueMinor = readAmount(c, { decimal: 'value', minor: 'value_minor' }, ctx)
    return {
      clickId: c.click_id,
      orderId: c.order_id,
      valueMinor: valueMinor ?? 0,
      currency: c.currency,
      occurredAt: c.occurred_at,
    }
  })

export type NewConversion = z.output<typeof newConversionSchema>
