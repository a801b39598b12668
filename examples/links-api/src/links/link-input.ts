import { z } from 'zod'
import { slugProblem } from './slug.js'
import { MAX_TAGS_PER_LINK, normalizeTag, tagProblem } from './tag.js'
import { normalizeTargetUrl, targetUrlProblem } from './target-url.js'

/** A zod string check from a rule that names its problem (or returns undefined). */
function ruled(problem: (value: string) => string | undefined) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .superRefine((value, ctx) => {
      const message = problem(value)
      if (message) ctx.addIssue({ code: 'custom', message })
    })
}

const tags = z
  .array(z.string({ error: 'each tag must be a string' }).transform(normalizeTag).pipe(ruled(tagProblem)), {
    error: 'must be a list of tags',
  })
  .max(MAX_TAGS_PER_LINK, `at most ${MAX_TAGS_PER_LINK} tags`)
  .transform((list) => [...new Set(list)])

const MAX_PAGE = 100
/** A search is a few words typed by a person (or a model): longer is not a search. */
export const MAX_SEARCH_LENGTH = 100

/** List cursors are opaque to clients: the position (seq) of the last link of the page, base64url. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s${seq}`).toString('base64url')
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^s(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
  return match ? Number(match[1]) : undefined
}

const day = z
  .string({ error: 'must be a date' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((v) => {
    const time = Date.parse(`${v}T00:00:00Z`)
    return !Number.isNaN(time) && new Date(time).toISOString().startsWith(v)
  }, 'must be a real calendar date')

/**
 * What the links API accepts, per operation. The origin of the service's own short URLs is needed
 * to refuse targets that point back at it.
 */
export function linkInputSchemas(publicUrl: string) {
  const ownOrigin = new URL(publicUrl).origin
  const targetUrl = ruled((v) => targetUrlProblem(v, ownOrigin)).transform(normalizeTargetUrl)
  const body = { error: 'the body must be a JSON object' }
  return {
    newLink: z.strictObject(
      { target_url: targetUrl, slug: ruled(slugProblem).optional(), tags: tags.default([]) },
      body,
    ),
    linkChanges: z
      .strictObject({ target_url: targetUrl.optional(), tags: tags.optional() }, body)
      .refine((c) => c.target_url !== undefined || c.tags !== undefined, 'name target_url or tags to change'),
    listQuery: z.strictObject({
      tag: z.string().transform(normalizeTag).pipe(ruled(tagProblem)).optional(),
      q: z
        .string({ error: 'must be a string' })
        .trim()
        .min(1, 'must not be empty')
        .max(MAX_SEARCH_LENGTH, `at most ${MAX_SEARCH_LENGTH} characters`)
        .optional(),
      limit: z
        .string()
        .regex(/^\d{1,6}$/, `must be a whole number from 1 to ${MAX_PAGE}`)
        .transform(Number)
        .pipe(
          z.number().min(1, `must be from 1 to ${MAX_PAGE}`).max(MAX_PAGE, `must be from 1 to ${MAX_PAGE}`),
        )
        .default(20),
      cursor: z
        .string()
        .max(64, 'is not a cursor of this API')
        .transform((c, ctx) => {
          const seq = decodeCursor(c)
          if (seq === undefined)
            ctx.addIssue({
              code: 'custom',
              message: 'is not a cursor of this API; use next_cursor of the previous page',
            })
          return seq ?? 0
        })
        .optional(),
    }),
    statsQuery: z.strictObject({ from: day.optional(), to: day.optional() }),
  }
}

export type LinkInputSchemas = ReturnType<typeof linkInputSchemas>
export type NewLink = z.output<LinkInputSchemas['newLink']>
export type LinkChanges = z.output<LinkInputSchemas['linkChanges']>
export type ListQuery = z.output<LinkInputSchemas['listQuery']>
export type StatsQuery = z.output<LinkInputSchemas['statsQuery']>
