/** The languages the pages speak; English defines the messages (en.ts), the others translate them. */
export const LOCALES = ['en', 'de', 'fr', 'es', 'ja', 'ar'] as const

export type Locale = (typeof LOCALES)[number]

/** Each language by its own name, for the language menu (the same on every page). */
export const LANGUAGE_NAMES: Record<Locale, string> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  ja: '日本語',
  ar: 'العربية',
}

const RTL: ReadonlySet<Locale> = new Set(['ar'])

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value)
}

export function directionOf(locale: Locale): 'ltr' | 'rtl' {
  return RTL.has(locale) ? 'rtl' : 'ltr'
}
