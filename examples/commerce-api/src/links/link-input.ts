import { z } from 'zod'
import { slugProblem } from '../../../shared/slug.js'
import { BODY, cursor, day, encodeCursor, limit, ruled, shopId, text, webUrl } from '../web/input.js'

const MAX_PAGE = 100
/** Each UTM value: at most 200 characters (they travel in every redirect's URL). */
const utmValue = text(200)

export const encodeLinkCursor = (seq: number) => encodeCursor(`s${seq}`)
const decodeLinkCursor = (raw: string) => {
  const match = /^s(\d{1,15})$/.exec(raw)
  return match ? Number(match[1]) : undefined
}

export const campaignName = text(100)

/** What the e-commerce link and statistics routes accept. */
export function linkInputSchemas(publicUrl: string) {
  return {
    newLink: z
      .strictObject(
        {
          product_id: shopId.optional(),
          target_url: webUrl(new URL(publicUrl).origin).optional(),
          slug: ruled(slugProblem).optional(),
          campaign: campaignName.optional(),
          utm: z
            .strictObject(
              {
                source: utmValue.optional(),
                medium: utmValue.optional(),
                campaign: utmValue.optional(),
                term: utmValue.optional(),
                content: utmValue.optional(),
              },
              { error: 'must be an object of source, medium, campaign, term, content' },
            )
            .default({}),
        },
        BODY,
      )
      .superRefine((l, ctx) => {
        if ((l.product_id === undefined) === (l.target_url === undefined))
          ctx.addIssue({
            code: 'custom',
            path: [l.product_id === undefined ? 'target_url' : 'product_id'],
            message:
              l.product_id === undefined
                ? 'is required: give product_id (a product of your catalogue) or target_url (any product page)'
                : 'give product_id or target_url, not both',
          })
      }),
    linkChanges: z
      .strictObject(
        {
          campaign: campaignName.nullable().optional(),
          utm: z
            .strictObject(
              {
                source: utmValue.nullable().optional(),
                medium: utmValue.nullable().optional(),
                campaign: utmValue.nullable().optional(),
                term: utmValue.nullable().optional(),
                content: utmValue.nullable().optional(),
              },
              { error: 'must be an object of source, medium, campaign, term, content' },
            )
            .optional(),
          archived: z.boolean({ error: 'must be true (archive) or false (bring back)' }).optional(),
        },
        BODY,
      )
      .refine(
        (c) => c.campaign !== undefined || c.utm !== undefined || c.archived !== undefined,
        'name campaign, utm or archived to change',
      ),
    listQuery: z.strictObject({
      campaign: campaignName.optional(),
      state: z
        .enum(['active', 'archived', 'all'], { error: 'must be active, archived or all' })
        .default('active'),
      limit: limit(MAX_PAGE, 20),
      cursor: cursor(decodeLinkCursor).optional(),
    }),
    statsQuery: z.strictObject({ from: day.optional(), to: day.optional() }),
  }
}

export type LinkInputSchemas = ReturnType<typeof linkInputSchemas>
export type NewLink = z.output<LinkInputSchemas['newLink']>
export type LinkChanges = z.output<LinkInputSchemas['linkChanges']>
export type LinkListQuery = z.output<LinkInputSchemas['listQuery']>
export type StatsQuery = z.output<LinkInputSchemas['statsQuery']>
