import { html, type SafeHtml } from '../html.js'
import { ar } from './ar.js'
import { de } from './de.js'
import { en, type Messages } from './en.js'
import { es } from './es.js'
import { fr } from './fr.js'
import { ja } from './ja.js'
import { directionOf, type Locale } from './locales.js'

export type { Messages }

export const CATALOGUES: Record<Locale, Messages> = { en, de, fr, es, ja, ar }

/**
 * What a page needs to speak the person's language: the language, its catalogue, its direction, and
 * the path the language menu brings the person back to.
 */
export interface Ui {
  locale: Locale
  t: Messages
  dir: 'ltr' | 'rtl'
  /** A path of ours (with its query) that shows this page again by GET; the menu returns there. */
  back: string
}

export function uiFor(locale: Locale, back = '/login'): Ui {
  return { locale, t: CATALOGUES[locale], dir: directionOf(locale), back }
}

/** English pages, as tests and callers without a request see them. */
export const ENGLISH: Ui = uiFor('en')

/** Every string of the English catalogue, by its path of keys (e.g. problems.formExpired). */
function englishStrings(node: object, path: string[] = [], into = new Map<string, string[]>()) {
  for (const [key, value] of Object.entries(node)) {
    if (typeof value === 'string') into.set(value, [...path, key])
    else if (value && Object.getPrototypeOf(value) === Object.prototype)
      englishStrings(value as object, [...path, key], into)
  }
  return into
}

const ENGLISH_STRINGS = englishStrings(en)

/**
 * A message a route wrote in English (an error's detail, a page's alert) in the page's language, when
 * the English catalogue has it; undefined otherwise.
 */
export function translated(ui: Ui, english: string): string | undefined {
  const path = ENGLISH_STRINGS.get(english)
  if (!path) return undefined
  let node: unknown = ui.t
  for (const key of path) node = (node as Record<string, unknown>)[key]
  return typeof node === 'string' ? node : undefined
}

/** `translated`, or the English as it is. */
export function inLanguage(ui: Ui, english: string): string {
  return translated(ui, english) ?? english
}

/**
 * Text an application or a person supplied (a name, an email), isolated from the page's direction on a
 * right-to-left page (<bdi>), so that a Latin name does not reorder the Arabic sentence around it.
 */
export function bidi(ui: Ui, text: string): SafeHtml | string {
  return ui.dir === 'rtl' ? html`<bdi>${text}</bdi>` : text
}
