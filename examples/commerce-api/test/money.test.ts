import { describe, expect, it } from 'vitest'
import { CURRENCY_CODES, minorUnitOf } from '../src/money/currencies.js'
import { formatMinor, MAX_MINOR, parseDecimal } from '../src/money/money.js'

describe('ISO 4217 currencies and their minor units', () => {
  it('holds the active codes with a minor unit, and none without one', () => {
    expect(CURRENCY_CODES.length).toBeGreaterThan(150)
    for (const code of CURRENCY_CODES) expect(code).toMatch(/^[A-Z]{3}$/)
    expect([minorUnitOf('EUR'), minorUnitOf('USD'), minorUnitOf('JPY'), minorUnitOf('KRW')]).toEqual([
      2, 2, 0, 0,
    ])
    expect([minorUnitOf('KWD'), minorUnitOf('BHD'), minorUnitOf('CLF')]).toEqual([3, 3, 4])
    for (const none of ['XAU', 'XDR', 'XTS', 'XXX', 'HRK', 'eur', 'EURO', 'toString', '__proto__'])
      expect(minorUnitOf(none), none).toBeUndefined()
  })

  it('agrees with the runtime’s own list (ICU) on which codes are currencies', () => {
    const known = new Set(Intl.supportedValuesOf('currency'))
    // ICU leaves out ISO's fund codes (units of account such as CLF, USN) and may lag behind ISO
    // for the newest codes (XCG, ZWG, VED); every other code it knows.
    const funds = ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW']
    const newest = ['XCG', 'ZWG', 'VED', 'SLE']
    const unknown = CURRENCY_CODES.filter((c) => !known.has(c))
    expect(unknown.filter((c) => !funds.includes(c) && !newest.includes(c))).toEqual([])
    // And on the minor units of the everyday ones.
    for (const code of ['EUR', 'USD', 'GBP', 'JPY', 'KRW', 'KWD', 'BHD', 'TND', 'CHF', 'INR', 'BRL'])
      expect(minorUnitOf(code), code).toBe(
        new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions()
          .maximumFractionDigits,
      )
  })
})

describe('amounts: decimal strings and minor units, never floats', () => {
  it.each([
    ['19.99', 'EUR', 1999n],
    ['19.9', 'EUR', 1990n],
    ['19', 'EUR', 1900n],
    ['0.01', 'EUR', 1n],
    ['1999', 'JPY', 1999n],
    ['1.5', 'KWD', 1500n],
    ['0.1', 'USD', 10n],
    ['10000000000000.00', 'USD', BigInt(MAX_MINOR)],
  ])('%s %s = %s minor units', (value, currency, minor) => {
    expect(parseDecimal(value, currency)).toEqual({ minor })
  })

  it.each([
    ['19.999', 'EUR', 'EUR has 2 decimals: "19.999" has more'],
    ['1.5', 'JPY', 'JPY has no minor unit: no decimals allowed'],
    ['-1', 'EUR', /decimal string/],
    ['1,50', 'EUR', /decimal string/],
    [' 1.50', 'EUR', /decimal string/],
    ['1.', 'EUR', /decimal string/],
    ['.5', 'EUR', /decimal string/],
    ['1e3', 'EUR', /decimal string/],
    ['10000000000000.01', 'USD', /at most 10000000000000.00/],
  ])('%s %s is refused', (value, currency, problem) => {
    const result = parseDecimal(value, currency) as { problem: string }
    if (typeof problem === 'string') expect(result.problem).toBe(problem)
    else expect(result.problem).toMatch(problem)
  })

  it('formats minor units exactly, beyond 2^53 too', () => {
    expect(formatMinor(1999, 'EUR')).toBe('19.99')
    expect(formatMinor(5, 'EUR')).toBe('0.05')
    expect(formatMinor(1999, 'JPY')).toBe('1999')
    expect(formatMinor(1500, 'KWD')).toBe('1.500')
    expect(formatMinor(123456789012345678901n, 'EUR')).toBe('1234567890123456789.01')
    // 0.1 + 0.2 is no concern: sums are integers.
    expect(formatMinor(10n + 20n, 'USD')).toBe('0.30')
  })
})
