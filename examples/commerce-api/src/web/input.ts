import { z } from 'zod'
import { normalizeTargetUrl, targetUrlProblem } from '../../../shared/target-url.js'
import { minorUnitOf } from '../money/currencies.js'
import { MAX_MINOR } from '../money/money.js'

/** A zod string check from a rule that names its problem (or returns undefined). */
export function ruled(problem: (value: string) => string | undefined) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .superRefine((value, ctx) => {
      const message = problem(value)
      if (message) ctx.addIssue({ code: 'custom', message })
    })
}

/** Printable text of 1 to `max` characters: no control characters, not only spaces. */
export function text(max: number) {
  return ruled((v) => {
    if (v.length > max) return `at most ${max} characters`
    if (v.trim() === '') return 'must not be empty'
    if (/\p{Cc}/u.test(v)) return 'must not contain control characters'
    return undefined
  })
}

/** An identifier of the shop's (product id, order id): 1 to 200 printable characters without spaces. */
export const shopId = ruled((v) => {
  if (v.length < 1 || v.length > 200) return '1 to 200 characters'
  if (/[\p{Cc}\p{Z}]/u.test(v)) return 'must not contain spaces or control characters'
  return undefined
})

/** An http(s) URL a visitor may be sent to (never this service itself), in its normal form. */
export function webUrl(ownOrigin: string) {
  return ruled((v) => targetUrlProblem(v, ownOrigin)).transform(normalizeTargetUrl)
}

/** An ISO 4217 code in upper case, checked against the list (currencies.ts). */
export const currency = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .refine(
    (v) => minorUnitOf(v) !== undefined,
    'must be an ISO 4217 currency code in upper case, such as EUR or JPY',
  )

/** Minor units as a JSON integer: never a fraction, never a string of digits that a float could have mangled. */
export const minorUnits = z
  .unknown()
  .superRefine((v, ctx) => {
    if (typeof v !== 'number' || !Number.isInteger(v))
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number of minor units (cents), from 0 to ${MAX_MINOR}`,
      })
    else if (v < 0 || v > MAX_MINOR)
      ctx.addIssue({ code: 'custom', message: `must be from 0 to ${MAX_MINOR}` })
  })
  .transform((v) => v as number)

/** A decimal string of major units ("19.99"): a JSON number here is a float, and refused. */
export const decimalString = z.unknown().superRefine((v, ctx) => {
  if (typeof v !== 'string')
    ctx.addIssue({
      code: 'custom',
      message:
        typeof v === 'number'
          ? 'must be a decimal string such as "19.99", never a JSON number (or send the minor units as an integer)'
          : 'must be a decimal string such as "19.99"',
    })
}) as unknown as z.ZodType<string>

const DAY_MS = 86_400_000
export const utcDay = (date: Date) => date.toISOString().slice(0, 10)
export const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS
export const dayOf = (n: number) => utcDay(new Date(n * DAY_MS))

/** A UTC calendar day, YYYY-MM-DD. */
export const day = z
  .string({ error: 'must be a date' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((v) => {
    const time = Date.parse(`${v}T00:00:00Z`)
    return !Number.isNaN(time) && new Date(time).toISOString().startsWith(v)
  }, 'must be a real calendar date')

/** An RFC 3339 time with its offset (`2026-05-01T12:00:00Z`, `…+02:00`). */
export const instant = z
  .string({ error: 'must be a string' })
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/,
    'must be an RFC 3339 time with its offset, such as 2026-05-01T12:00:00Z',
  )
  .transform((v, ctx) => {
    const date = new Date(v)
    if (Number.isNaN(date.getTime())) ctx.addIssue({ code: 'custom', message: 'must be a real time' })
    return date
  })

/** `limit` of a listing: 1 to `max`, `fallback` when absent. */
export function limit(max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d{1,6}$/, `must be a whole number from 1 to ${max}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be from 1 to ${max}`).max(max, `must be from 1 to ${max}`))
    .default(fallback)
}

/** An opaque cursor (base64url of the keyset position, `decode` reads it back). */
export function cursor<T>(decode: (raw: string) => T | undefined) {
  return z
    .string()
    .max(200, 'is not a cursor of this API')
    .transform((c, ctx) => {
      const position = decode(Buffer.from(c, 'base64url').toString('utf8'))
      if (position === undefined)
        ctx.addIssue({
          code: 'custom',
          message: 'is not a cursor of this API; use next_cursor of the previous page',
        })
      return position as T
    })
}

export const encodeCursor = (raw: string) => Buffer.from(raw, 'utf8').toString('base64url')

/** The body of a POST or PUT must be an object. */
export const BODY = { error: 'the body must be a JSON object' }

/** A UUID path parameter: anything else names nothing, and is answered without a query. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
