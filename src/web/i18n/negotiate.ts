import { isLocale, type Locale } from './locales.js'

/** The cookie that remembers the language a person chose in the menu. */
export const LANGUAGE_COOKIE = 'linkauth_lang'

/** The supported language a BCP 47 tag asks for, by its primary subtag (de-CH → de); undefined if none. */
export function localeOfTag(tag: string): Locale | undefined {
  const primary = tag.trim().split(/[-_]/, 1)[0]!.toLowerCase()
  return isLocale(primary) ? primary : undefined
}

/**
 * OIDC Core §3.1.2.1 ui_locales: space-separated tags in order of preference. The first one we speak;
 * undefined when none (not an error: the request goes on in another language).
 */
export function localeOfUiLocales(value: string | undefined): Locale | undefined {
  if (!value) return undefined
  for (const tag of value.split(' ').slice(0, 20)) {
    const locale = localeOfTag(tag)
    if (locale) return locale
  }
  return undefined
}

/**
 * RFC 9110 §12.5.4 Accept-Language: the supported language with the highest q (0 excludes; ties keep
 * the header's order); `*` matches nothing of its own. Undefined when none fits.
 */
export function localeOfAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined
  let best: { locale: Locale; q: number } | undefined
  for (const part of header.split(',').slice(0, 50)) {
    const [tag = '', ...params] = part.split(';')
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!Number.isFinite(q) || q <= 0 || q > 1) continue
    const locale = localeOfTag(tag)
    if (locale && (!best || q > best.q)) best = { locale, q }
  }
  return best?.locale
}

/**
 * The language of a page, in this order: the authorization request's ui_locales (kept with the
 * pending request through sign-in), the person's choice in the menu (the cookie), the browser's
 * Accept-Language, the operator's DEFAULT_LOCALE.
 */
export function chooseLocale(sources: {
  uiLocale?: Locale | null | undefined
  cookie?: string | undefined
  acceptLanguage?: string | undefined
  fallback: Locale
}): Locale {
  return (
    sources.uiLocale ??
    (isLocale(sources.cookie) ? sources.cookie : undefined) ??
    localeOfAcceptLanguage(sources.acceptLanguage) ??
    sources.fallback
  )
}
