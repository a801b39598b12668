import { minorUnitOf } from './currencies.js'

/**
 * Amounts are whole numbers of the currency's minor unit (cents for EUR, yen for JPY), never
 * floating point. They arrive as a JSON integer of minor units (`price_minor: 1999`) or as a decimal
 * string of major units (`price: "19.99"`), and leave as both: `value_minor` (a string: sums may
 * outgrow JSON's safe integers) and `value` (the decimal string).
 */

/** The largest single amount accepted: 10^15 minor units (ten trillion euros), safe as a JSON integer. */
export const MAX_MINOR = 10 ** 15

/** A decimal string: digits, optionally a point and more digits; no sign, exponent or spaces. */
const DECIMAL = /^(\d{1,16})(?:\.(\d{1,4}))?$/

/** Why `value` is no amount in `currency` (major units, a decimal string), or its minor units. */
export function parseDecimal(value: string, currency: string): { minor: bigint } | { problem: string } {
  const digits = minorUnitOf(currency)
  if (digits === undefined) return { problem: 'needs a valid currency' }
  const match = DECIMAL.exec(value)
  if (!match) return { problem: 'must be a decimal string such as "19.99" (digits, one optional point)' }
  const fraction = match[2] ?? ''
  if (fraction.length > digits)
    return {
      problem:
        digits === 0
          ? `${currency} has no minor unit: no decimals allowed`
          : `${currency} has ${digits} decimals: "${value}" has more`,
    }
  const minor = BigInt(match[1]!) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0') || '0')
  if (minor > BigInt(MAX_MINOR)) return { problem: `at most ${formatMinor(BigInt(MAX_MINOR), currency)}` }
  return { minor }
}

/** Minor units as the decimal string of major units: 1999n EUR → "19.99", 1999n JPY → "1999". */
export function formatMinor(minor: bigint | number | string, currency: string): string {
  const digits = minorUnitOf(currency) ?? 2
  const value = BigInt(minor)
  const negative = value < 0n
  const text = (negative ? -value : value).toString().padStart(digits + 1, '0')
  const whole = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`
  return negative ? `-${whole}` : whole
}
