import { html } from '../html.js'
import type { Locale } from './locales.js'

/** One plural form per Intl.PluralRules category the language uses; `other` always. */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }

const pluralRules = new Map<Locale, Intl.PluralRules>()

/** The form of `forms` for `count` in `locale` (Intl.PluralRules); `#` in a form stands for the count. */
export function plural(locale: Locale, count: number, forms: PluralForms): string {
  let rules = pluralRules.get(locale)
  if (!rules) pluralRules.set(locale, (rules = new Intl.PluralRules(locale)))
  const form = forms[rules.select(count)] ?? forms.other
  return form.replace('#', new Intl.NumberFormat(locale).format(count))
}

/** How long to wait, as a person would say it: "40 seconds", "3 Minuten", "2時間" (Intl.NumberFormat). */
export function duration(locale: Locale, seconds: number): string {
  const [value, unit] =
    seconds < 90
      ? [seconds, 'second']
      : seconds < 90 * 60
        ? [Math.ceil(seconds / 60), 'minute']
        : [Math.ceil(seconds / 3600), 'hour']
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(value)
}

const dateFormats = new Map<Locale, Intl.DateTimeFormat>()

/**
 * A moment, inside <time> for machines. English keeps the unambiguous "2026-03-01 12:00 UTC"; the
 * other languages say it their way (Intl.DateTimeFormat), in UTC as well, with the zone named.
 */
export function when(locale: Locale, date: Date) {
  const iso = date.toISOString()
  if (locale === 'en') return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
  let format = dateFormats.get(locale)
  if (!format) {
    format = new Intl.DateTimeFormat(locale, {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: 'UTC',
    })
    dateFormats.set(locale, format)
  }
  return html`<time datetime="${iso}">${format.format(date)} UTC</time>`
}
