import { describe, expect, it } from 'vitest'
import { CATALOGUES } from '../../src/web/i18n/catalogue.js'
import { en } from '../../src/web/i18n/en.js'
import { duration, plural } from '../../src/web/i18n/format.js'
import { LOCALES } from '../../src/web/i18n/locales.js'
import { chooseLocale, localeOfAcceptLanguage, localeOfUiLocales } from '../../src/web/i18n/negotiate.js'

/** Every key of a catalogue, nested ones by their path, with the kind of value each holds. */
function shape(node: object, path = ''): string[] {
  return Object.entries(node).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key
    if (value && Object.getPrototypeOf(value) === Object.prototype) return shape(value as object, at)
    return [
      `${at}:${typeof value === 'function' ? `function/${(value as () => unknown).length}` : typeof value}`,
    ]
  })
}

describe('message catalogues (issue 40)', () => {
  const english = shape(en).sort()

  it.each(LOCALES.filter((l) => l !== 'en'))(
    '%s has every key of English, of the same kind, and no other',
    (locale) => {
      expect(shape(CATALOGUES[locale]).sort()).toEqual(english)
    },
  )

  it.each(LOCALES.filter((l) => l !== 'en'))(
    '%s translates: no string of it is the English one (beyond single words)',
    (locale) => {
      const same = Object.entries(CATALOGUES[locale]).filter(
        ([key, value]) =>
          typeof value === 'string' && value === (en as Record<string, unknown>)[key] && value.includes(' '),
      )
      expect(same).toEqual([])
    },
  )
})

describe('plurals and durations through Intl', () => {
  it('chooses the form of the count in the language', () => {
    const forms = { one: 'one', two: 'two', few: 'few', many: 'many', other: 'other', zero: 'zero' }
    expect([0, 1, 2, 5].map((n) => plural('en', n, forms))).toEqual(['other', 'one', 'other', 'other'])
    expect([0, 1, 2, 5, 11, 100].map((n) => plural('ar', n, forms))).toEqual([
      'zero',
      'one',
      'two',
      'few',
      'many',
      'other',
    ])
    expect(plural('ja', 1, { other: '# 件' })).toBe('1 件')
  })

  it('says durations in the language', () => {
    expect(duration('en', 40)).toBe('40 seconds')
    expect(duration('de', 90)).toBe('2 Minuten')
    expect(duration('fr', 1)).toMatch(/^1\s+seconde$/u)
  })
})

describe('choosing the language', () => {
  it('takes the first ui_locales tag spoken here, by its primary subtag', () => {
    expect(localeOfUiLocales('sv-SE fr-CA de')).toBe('fr')
    expect(localeOfUiLocales('sv')).toBeUndefined()
    expect(localeOfUiLocales(undefined)).toBeUndefined()
  })

  it('reads Accept-Language by q-value, prefix-matching region tags', () => {
    expect(localeOfAcceptLanguage('de-CH')).toBe('de')
    expect(localeOfAcceptLanguage('sv;q=1, ja;q=0.5, es;q=0.8')).toBe('es')
    expect(localeOfAcceptLanguage('ar;q=0, fr;q=0.1')).toBe('fr')
    expect(localeOfAcceptLanguage('*, sv')).toBeUndefined()
    expect(localeOfAcceptLanguage('de;q=abc, ja;q=2')).toBeUndefined()
  })

  it('orders ui_locales, then the cookie, then Accept-Language, then the default', () => {
    const all = { uiLocale: 'ja' as const, cookie: 'fr', acceptLanguage: 'de', fallback: 'es' as const }
    expect(chooseLocale(all)).toBe('ja')
    expect(chooseLocale({ ...all, uiLocale: null })).toBe('fr')
    expect(chooseLocale({ ...all, uiLocale: null, cookie: 'xx' })).toBe('de')
    expect(chooseLocale({ ...all, uiLocale: null, cookie: undefined, acceptLanguage: 'sv' })).toBe('es')
  })
})
