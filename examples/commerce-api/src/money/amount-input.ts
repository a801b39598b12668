import type { z } from 'zod'
import { parseDecimal } from './money.js'

/**
 * An amount given either way, `<decimalKey>` ("19.99", major units) or `<minorKey>` (1999, minor
 * units), exactly one of them, read in the object's currency: its minor units, or undefined after
 * adding the issue (naming the field) to `ctx`.
 */
export function readAmount(
  value: { currency?: unknown } & Record<string, unknown>,
  keys: { decimal: string; minor: string },
  ctx: z.RefinementCtx,
): number | undefined {
  const decimal = value[keys.decimal]
  const minor = value[keys.minor]
  if (decimal === undefined && minor === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [keys.decimal],
      message: `is required: give ${keys.decimal} as a decimal string ("19.99") or ${keys.minor} as a whole number of minor units (1999)`,
    })
    return undefined
  }
  if (decimal !== undefined && minor !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [keys.minor],
      message: `give ${keys.decimal} or ${keys.minor}, not both`,
    })
    return undefined
  }
  if (minor !== undefined) return minor as number
  const parsed = parseDecimal(decimal as string, String(value.currency))
  if ('problem' in parsed) {
    ctx.addIssue({ code: 'custom', path: [keys.decimal], message: parsed.problem })
    return undefined
  }
  return Number(parsed.minor)
}
