import { z } from 'zod'
import { readAmount } from '../money/amount-input.js'
import {
  BODY,
  currency,
  cursor,
  decimalString,
  encodeCursor,
  instant,
  limit,
  minorUnits,
  shopId,
  text,
  UUID,
  webUrl,
} from '../web/input.js'

/** At most this many products in one batch. */
export const MAX_BATCH = 1000
/** A page of the catalogue: at most this many products. */
export const MAX_PRODUCT_PAGE = 1000
export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'unavailable'] as const
export type Availability = (typeof AVAILABILITIES)[number]

export interface ProductCursor {
  updatedAt: Date
  id: string
}

/** `2026-05-01T12:00:00.123Z|<uuid>`: the last product of a page, in (updated_at, id) order. */
export const encodeProductCursor = (c: ProductCursor) => encodeCursor(`${c.updatedAt.toISOString()}|${c.id}`)

function decodeProductCursor(raw: string): ProductCursor | undefined {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(.+)$/.exec(raw)
  if (!match || !UUID.test(match[2]!)) return undefined
  const updatedAt = new Date(match[1]!)
  return Number.isNaN(updatedAt.getTime()) ? undefined : { updatedAt, id: match[2]! }
}

/** What the catalogue routes accept. */
export function productInputSchemas(publicUrl: string) {
  const url = webUrl(new URL(publicUrl).origin)
  const product = z
    .strictObject(
      {
        product_id: shopId,
        title: text(500),
        url,
        price: decimalString.optional(),
        price_minor: minorUnits.optional(),
        currency,
        availability: z.enum(AVAILABILITIES, {
          error: `must be one of ${AVAILABILITIES.join(', ')}`,
        }),
        image_url: url.nullable().optional(),
      },
      { error: 'each product must be a JSON object' },
    )
    .transform((p, ctx) => {
      const priceMinor = readAmount(p, { decimal: 'price', minor: 'price_minor' }, ctx)
      return {
        shopProductId: p.product_id,
        title: p.title,
        url: p.url,
        priceMinor: priceMinor ?? 0,
        currency: p.currency,
        availability: p.availability,
        imageUrl: p.image_url ?? null,
      }
    })
  return {
    batch: z
      .strictObject(
        {
          products: z
            .array(product, { error: 'must be a list of products' })
            .min(1, 'must hold at least one product')
            .max(MAX_BATCH, `at most ${MAX_BATCH} products a request; send more requests`),
          sync_run_id: z.string().regex(UUID, 'must be the id of a sync run').optional(),
        },
        BODY,
      )
      .superRefine((b, ctx) => {
        const seen = new Set<string>()
        b.products.forEach((p, i) => {
          if (seen.has(p.shopProductId))
            ctx.addIssue({
              code: 'custom',
              path: ['products', i, 'product_id'],
              message: `"${p.shopProductId}" appears twice in this batch`,
            })
          seen.add(p.shopProductId)
        })
      }),
    listQuery: z.strictObject({
      updated_since: instant.optional(),
      availability: z
        .enum(AVAILABILITIES, { error: `must be one of ${AVAILABILITIES.join(', ')}` })
        .optional(),
      limit: limit(MAX_PRODUCT_PAGE, 100),
      cursor: cursor(decodeProductCursor).optional(),
    }),
  }
}

export type ProductInputSchemas = ReturnType<typeof productInputSchemas>
export type ProductBatch = z.output<ProductInputSchemas['batch']>
export type NewProduct = ProductBatch['products'][number]
export type ProductListQuery = z.output<ProductInputSchemas['listQuery']>
