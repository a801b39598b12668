import type { FastifyInstance } from 'fastify'
import { parseInput } from '../../../shared/parse.js'
import { formatMinor } from '../money/money.js'
import { ECOMMERCE, noStore, ownerOf } from '../web/owner.js'
import { newConversionSchema } from './conversion-input.js'
import type { Conversion, ConversionService } from './conversion.service.js'

export function conversionJson(c: Conversion) {
  return {
    id: c.id,
    order_id: c.orderId,
    click_id: c.clickId,
    link_id: c.linkId,
    value: formatMinor(c.valueMinor, c.currency),
    value_minor: c.valueMinor,
    currency: c.currency,
    occurred_at: c.occurredAt.toISOString(),
    created_at: c.createdAt.toISOString(),
  }
}

/** Conversions (ecommerce:write): report one (idempotent by order id), read one back. */
export function conversionRoutes(conversions: ConversionService) {
  return async (app: FastifyInstance) => {
    noStore(app)

    app.post('/api/conversions', { config: ECOMMERCE }, async (request, reply) => {
      const { conversion, created } = await conversions.report(
        ownerOf(request),
        parseInput(newConversionSchema, request.body),
      )
      return reply
        .code(created ? 201 : 200)
        .header('location', `/api/conversions/${encodeURIComponent(conversion.orderId)}`)
        .send(conversionJson(conversion))
    })

    app.get('/api/conversions/:order_id', { config: ECOMMERCE }, async (request) => {
      const { order_id } = request.params as { order_id: string }
      return conversionJson(await conversions.get(ownerOf(request), order_id))
    })
  }
}
