import { describe, expect, it } from 'vitest'
import type { AccountEvent, ConnectedApp } from '../../src/accounts/connected-apps.service.js'
import type { Passkey } from '../../src/accounts/passkey.repository.js'
import type { AppDisplay } from '../../src/clients/standing.js'
import { html } from '../../src/web/html.js'
import { uiFor, type Ui } from '../../src/web/i18n/catalogue.js'
import { en } from '../../src/web/i18n/en.js'
import { LOCALES, type Locale } from '../../src/web/i18n/locales.js'
import { errorPage } from '../../src/web/layout.js'
import { activityPage } from '../../src/web/pages/activity.page.js'
import type { AccountFrame } from '../../src/web/pages/account-layout.js'
import { connectedAppsPage } from '../../src/web/pages/connected-apps.page.js'
import { consentPage } from '../../src/web/pages/consent.page.js'
import { deviceConsentPage, deviceDonePage, userCodePage } from '../../src/web/pages/device.page.js'
import { passkeysPage } from '../../src/web/pages/passkeys.page.js'
import {
  changePasswordPage,
  passwordSetPage,
  resetLinkInvalidPage,
  resetPasskeyPage,
  resetPasswordPage,
} from '../../src/web/pages/password.page.js'
import { rateLimitedPage } from '../../src/web/pages/rate-limited.page.js'
import { signedInPage, signInPage } from '../../src/web/pages/sign-in.page.js'

/**
 * Issue 40: every page, rendered in every language, says nothing in English. The check reads the
 * rendered text a person sees or hears (text and aria-labels; not scripts, <code>, or what is marked
 * lang="en": an OAuth error's description for the developer, the menu's "English"), takes out what
 * the app and the person supplied (names, hosts, emails, URLs), and looks for every English sentence
 * piece of two words or more of the English catalogue.
 */

const SUPPLIED = [
  'Shortcut Stats',
  'Phish Helper',
  'Agent Smith',
  'phish.example',
  'agent.example',
  'stats.example',
  'app.example',
  'Links API',
  'https://api.example/links',
  'https://stats.example/',
  'https://stats.example/privacy',
  'https://stats.example/terms',
  'Counts clicks on your links.',
  'ada@example.com',
  'Work laptop',
  'linkauth',
  'UTC',
]

const app = (
  standing: AppDisplay['standing'],
  name: string,
  host: string,
  nameWithheld = false,
): AppDisplay => ({
  name,
  host,
  hosts: [],
  standing,
  label: '',
  nameWithheld,
})
const verified = app('verified', 'Shortcut Stats', 'stats.example')
const vouched = app('vouched', 'Agent Smith', 'agent.example', true)
const unverified = app('unverified', 'Phish Helper', 'phish.example')
const about = {
  homepageUrl: 'https://stats.example/',
  privacyPolicyUrl: 'https://stats.example/privacy',
  termsUrl: 'https://stats.example/terms',
  description: 'Counts clicks on your links.',
}
const at = new Date('2026-03-01T12:00:00Z')

function connected(display: AppDisplay, connectedNow: boolean, onAnotherDevice: boolean): ConnectedApp {
  return {
    clientId: display.name,
    name: display.name,
    display,
    connected: connectedNow,
    scopes: [
      { scope: 'links:read', description: 'x' },
      { scope: 'links:write', description: 'x' },
    ],
    resources: [{ resource: 'https://api.example/links', name: 'Links API' }],
    about,
    authorizedAt: at,
    lastUsedAt: connectedNow ? at : null,
    onAnotherDevice,
  }
}

const EVENTS: AccountEvent[] = [
  ...['consent.granted', 'consent.widened'].map((type) => ({
    at,
    type,
    appName: 'Phish Helper',
    app: unverified,
    reason: undefined,
    scopes: ['links:read'],
  })),
  ...['user_revoked', 'client_disabled', 'operator_revoked'].map((reason) => ({
    at,
    type: 'grant.revoked',
    appName: 'Shortcut Stats',
    app: verified,
    reason,
    scopes: [],
  })),
  { at, type: 'grant.revoked', appName: undefined, reason: undefined, scopes: [] },
  ...[
    'password.changed',
    'password.reset',
    'passkey.registered',
    'passkey.renamed',
    'passkey.removed',
    'passkey.reset',
    'password_sign_in.disabled',
    'password_sign_in.enabled',
  ].map((type) => ({ at, type, appName: undefined, reason: undefined, scopes: [], name: 'Work laptop' })),
  { at, type: 'passkey.removed', appName: undefined, reason: undefined, scopes: [] },
]

const PASSKEYS: Passkey[] = [
  {
    id: 'p1',
    userId: 'u',
    name: 'Work laptop',
    backupEligible: true,
    backedUp: true,
    createdAt: at,
    lastUsedAt: at,
  },
  {
    id: 'p2',
    userId: 'u',
    name: 'Work laptop',
    backupEligible: false,
    backedUp: false,
    createdAt: at,
    lastUsedAt: null,
  },
]

/** Every page, in every state that shows other words. */
function pages(ui: Ui): Record<string, string> {
  const frame = (section: AccountFrame['section']): AccountFrame => ({
    section,
    email: 'ada@example.com',
    logoutCsrfToken: 'tok',
    passkeys: true,
    ui,
  })
  const consent = (display: AppDisplay, confirmOnly: boolean) =>
    consentPage(ui, {
      app: display,
      onDevice: confirmOnly,
      about,
      scopes: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      apis: [{ name: 'Links API', resource: 'https://api.example/links', scopes: ['links:read'] }],
      redirectUri: 'https://app.example/callback',
      email: 'ada@example.com',
      requestId: 'r',
      csrfToken: 'c',
      logoutCsrfToken: 'l',
      confirmOnly,
    })
  const t = ui.t
  return {
    signIn: signInPage(ui, { csrfToken: 'c', app: vouched, passkeys: true }),
    signInFailed: signInPage(ui, {
      csrfToken: 'c',
      app: unverified,
      failed: true,
      passkeys: true,
      passkeyFailed: true,
    }),
    signInUnknownPasskey: signInPage(ui, {
      csrfToken: 'c',
      passkeys: true,
      passkeyFailed: true,
      unknownPasskey: { credentialId: 'id', rpId: 'app.example' },
      retryAfterSeconds: 40,
    }),
    signedIn: signedInPage(ui, { email: 'ada@example.com', logoutCsrfToken: 'l' }),
    consentVerified: consent(verified, false),
    consentVouched: consent(vouched, false),
    consentUnverified: consent(unverified, false),
    continue: consent(unverified, true),
    deviceCode: userCodePage(ui, { csrfToken: 'c', problem: t.wrongDeviceCode }),
    deviceConsent: deviceConsentPage(ui, {
      app: verified,
      about,
      scopes: ['links:read'],
      email: 'ada@example.com',
      requestId: 'r',
      csrfToken: 'c',
      logoutCsrfToken: 'l',
      problem: t.tickTheBox,
    }),
    deviceAllowed: deviceDonePage(ui, true, 'Shortcut Stats'),
    deviceDenied: deviceDonePage(ui, false, 'Shortcut Stats'),
    apps: connectedAppsPage({
      frame: frame('apps'),
      apps: [
        connected(verified, true, false),
        connected(vouched, false, true),
        connected(unverified, true, false),
      ],
      csrfToken: 'c',
      revokedName: 'Phish Helper',
    }),
    noApps: connectedAppsPage({ frame: frame('apps'), apps: [], csrfToken: 'c' }),
    activity: activityPage(frame('activity'), EVENTS),
    noActivity: activityPage(frame('activity'), []),
    passkeys: passkeysPage({
      frame: frame('passkeys'),
      passkeys: PASSKEYS,
      csrfToken: 'c',
      fresh: true,
      notice: 'added',
      error: en.passkeyNameRule,
    }),
    passkeysConfirm: passkeysPage({
      frame: frame('passkeys'),
      passkeys: PASSKEYS,
      csrfToken: 'c',
      fresh: false,
      confirmError: en.notConfirmed,
      retryAfterSeconds: 3 * 3600,
    }),
    noPasskeys: passkeysPage({ frame: frame('passkeys'), passkeys: [], csrfToken: 'c', fresh: false }),
    passwordOn: changePasswordPage({
      frame: frame('password'),
      csrfToken: 'c',
      error: t.passwordsDiffer,
      retryAfterSeconds: 120,
      passwordSignIn: { on: true, hasPasskeys: false, notice: t.passwordSignInOnAgain },
    }),
    passwordOff: changePasswordPage({
      frame: frame('password'),
      csrfToken: 'c',
      passwordSignIn: { on: false, hasPasskeys: true, notice: t.passwordSignInOffNow },
    }),
    resetPassword: resetPasswordPage(ui, { token: 't', csrfToken: 'c', error: t.passwordTooShort }),
    resetPasskey: resetPasskeyPage(ui, { token: 't', csrfToken: 'c', error: t.passkeyRegisterFailed }),
    passwordChanged: passwordSetPage(ui, {
      heading: t.passwordChanged,
      message: `${t.passwordChangedMessage} ${t.appsDisconnected(3)}`,
      link: html`<a href="/account/apps">${t.backToConnectedApps}</a>`,
    }),
    passkeyAdded: passwordSetPage(ui, {
      heading: t.passkeyAddedTitle,
      message: t.passkeyAddedMessage('Work laptop'),
      link: html`<a href="/login">${t.signInWithPasskey}</a>`,
    }),
    resetLinkInvalid: resetLinkInvalidPage(ui),
    rateLimited: rateLimitedPage(ui, 30),
    notFound: errorPage(ui, { title: t.notFoundTitle, message: t.notFoundMessage, advice: t.notFoundAdvice }),
    formExpired: errorPage(ui, {
      title: t.requestErrorTitle,
      detail: en.problems.formExpired,
      advice: t.requestErrorAdvice,
    }),
    oauthError: errorPage(ui, {
      title: t.requestErrorTitle,
      detail: 'The redirect_uri is not registered for this client.',
      code: 'invalid_request',
      advice: t.requestErrorAdvice,
    }),
  }
}

const decode = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&')

/** What a person reads or hears: text and aria-labels, without scripts, code and English-marked parts. */
export function visibleText(page: string): string {
  const labels = [...page.matchAll(/aria-label="([^"]*)"/g)].map((m) => m[1]).join(' | ')
  let text = page
    .replace(/<head>[^]*?<\/head>/, '')
    .replace(/<script[^]*?<\/script>/g, ' | ')
    .replace(/<code>[^]*?<\/code>/g, ' | ')
    .replace(/<(\w+)[^>]*\blang="en"[^>]*>[^]*?<\/\1>/g, ' | ')
  const title = /<title>([^<]*)<\/title>/.exec(page)?.[1] ?? ''
  text = `${decode(title)} | ${decode(labels)} | ${decode(text.replace(/<[^>]+>/g, ' | '))}`
  for (const supplied of SUPPLIED) text = text.split(supplied).join(' | ')
  return text.replace(/\s+/g, ' ')
}

const HOLE = '\u24cd'

/** Every piece of two words or more of the English catalogue's messages. */
function englishPieces(): string[] {
  const values: string[] = []
  const walk = (node: object) => {
    for (const value of Object.values(node)) {
      if (typeof value === 'string') values.push(value)
      else if (typeof value === 'function')
        values.push(String((value as (...a: string[]) => unknown)(HOLE, HOLE, HOLE)))
      else if (value && Object.getPrototypeOf(value) === Object.prototype) walk(value as object)
      else if (value) values.push(String(value))
    }
  }
  walk(en)
  const pieces = values
    .map((v) => decode(v.replace(/<[^>]+>/g, ' ')))
    .flatMap((v) => v.split(new RegExp(`[.:;!?()“”"«»,|${HOLE}—–]|NaN`)))
    .map((p) => p.trim().replace(/\s+/g, ' '))
    .filter((p) => p.split(' ').length >= 2)
  return [...new Set(pieces)]
}

const PIECES = englishPieces()

function englishIn(text: string): string[] {
  const lower = ` ${text.toLowerCase()} `
  return PIECES.filter((piece) => {
    const at = lower.indexOf(piece.toLowerCase())
    if (at < 0) return false
    const before = lower[at - 1]!
    const after = lower[at + piece.length]!
    return !/\p{L}/u.test(before) && !/\p{L}/u.test(after)
  })
}

describe('pages in every language (issue 40)', () => {
  it('the check finds English: the English pages are full of it', () => {
    const english = pages(uiFor('en'))
    for (const [name, page] of Object.entries(english))
      expect(englishIn(visibleText(page)), name).not.toEqual([])
    expect(PIECES.length).toBeGreaterThan(150)
  })

  describe.each(LOCALES.filter((l): l is Exclude<Locale, 'en'> => l !== 'en'))('%s', (locale) => {
    const ui = uiFor(locale)
    it.each(Object.entries(pages(ui)))('%s has no English left', (_name, page) => {
      expect(englishIn(visibleText(page))).toEqual([])
    })

    it('marks its language and direction on <html>, and the menu its choice', () => {
      const page = pages(ui).signIn
      const dir = locale === 'ar' ? ' dir="rtl"' : ''
      expect(page).toContain(`<html lang="${locale}"${dir}>`)
      expect(page).toMatch(new RegExp(`hreflang="${locale}" aria-current="true"`))
    })
  })

  it('isolates app names and hosts on a right-to-left page', () => {
    const page = pages(uiFor('ar')).consentUnverified
    expect(page).toContain('<span class="app-name" dir="auto">Phish Helper</span>')
    expect(page).toContain('<bdi>phish.example</bdi>')
  })
})
