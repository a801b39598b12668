import type { FastifyInstance, FastifyRequest } from 'fastify'
import { formField } from '../../input/form-field.js'
import { uiFor, type Ui } from './catalogue.js'
import { isLocale, type Locale } from './locales.js'
import { chooseLocale, LANGUAGE_COOKIE } from './negotiate.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The operator's DEFAULT_LOCALE: the language of a page when nothing else chooses one. */
    defaultLocale?: Locale
  }
}

const YEAR_SECONDS = 365 * 24 * 3600

/** A path of ours to come back to; anything else (another origin, `//host`, a backslash) is /login. */
export function safeBack(value: string | undefined): string {
  if (!value || value.length > 2048 || !value.startsWith('/') || /^\/[/\\]|[\\\s]/.test(value))
    return '/login'
  return value
}

/** The language menu's link for `locale`, back to `back` afterwards. */
export function languageLink(locale: Locale, back: string): string {
  return `/language?lang=${locale}&back=${encodeURIComponent(back)}`
}

/** A form's `request` and `next` (a pending request's id, a return-path key) carried back by GET. */
function carriedBack(path: string, body: unknown): string {
  const query = new URLSearchParams()
  for (const name of ['request', 'next']) {
    const value = formField(body, name)
    if (value && /^[A-Za-z0-9_-]{1,64}$/.test(value)) query.set(name, value)
  }
  return query.size > 0 ? `${path}?${query.toString()}` : path
}

/**
 * The language a page for this request speaks (negotiate.ts: ui_locales of the pending request given
 * as `uiLocale`, then the menu's cookie, Accept-Language, DEFAULT_LOCALE), and where the language
 * menu returns: this address when it was a GET, else its path with the form's pending request (a
 * failed sign-in goes back to the same sign-in), which shows the page again by GET.
 */
export function uiOf(request: FastifyRequest, uiLocale?: Locale | null): Ui {
  const locale = chooseLocale({
    uiLocale,
    cookie: request.cookies?.[LANGUAGE_COOKIE],
    acceptLanguage: request.headers['accept-language'],
    fallback: request.server.defaultLocale ?? 'en',
  })
  const back =
    request.method === 'GET' ? request.url : carriedBack(request.url.split('?', 1)[0]!, request.body)
  return uiFor(locale, safeBack(back))
}

/**
 * GET /language?lang=de&back=/account/apps: the language menu. Remembers the choice in a cookie for a
 * year (SameSite=Lax, not secret: a preference) and goes back to the page, which then speaks it.
 */
export function languageRoutes(config: { issuer: string }) {
  return async (app: FastifyInstance) => {
    app.get('/language', async (request, reply) => {
      const lang = formField(request.query, 'lang')
      if (isLocale(lang)) {
        reply.setCookie(LANGUAGE_COOKIE, lang, {
          path: '/',
          sameSite: 'lax',
          httpOnly: true,
          secure: config.issuer.startsWith('https://'),
          maxAge: YEAR_SECONDS,
        })
      }
      return reply
        .header('cache-control', 'no-store')
        .redirect(safeBack(formField(request.query, 'back')), 303)
    })
  }
}
