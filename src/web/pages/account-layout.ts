import { html, type SafeHtml } from '../html.js'
import type { Messages, Ui } from '../i18n/catalogue.js'
import { page } from '../layout.js'

export type AccountSection = 'apps' | 'passkeys' | 'password' | 'activity'

const SECTIONS: readonly { key: AccountSection; href: string; label: keyof Messages }[] = [
  { key: 'apps', href: '/account/apps', label: 'navApps' },
  { key: 'passkeys', href: '/account/passkeys', label: 'navPasskeys' },
  { key: 'password', href: '/account/password', label: 'navPassword' },
  { key: 'activity', href: '/account/activity', label: 'navActivity' },
]

export interface AccountFrame {
  section: AccountSection
  email: string
  /** The session's sign-out token (LOGOUT_BINDING): every account page offers Sign out. */
  logoutCsrfToken: string
  /** Whether the Passkeys section exists on this server (PASSKEYS). */
  passkeys: boolean
  /** The page's language. */
  ui: Ui
}

/**
 * One account area: a small navigation across its sections (the current one marked for assistive
 * technology), the section's cards, spaced apart, then who is signed in, with Sign out.
 */
export function accountPage(
  title: string,
  frame: AccountFrame,
  body: SafeHtml,
  options: { script?: boolean } = {},
): string {
  const t = frame.ui.t
  const sections = SECTIONS.filter((s) => s.key !== 'passkeys' || frame.passkeys)
  return page(
    frame.ui,
    title,
    html`<div class="account">
      <nav class="account-nav" aria-label="${t.yourAccount}">
        <ul>
          ${sections.map(
            (s) =>
              html`<li>
                <a href="${s.href}"${s.key === frame.section ? html` aria-current="page"` : ''}>${t[s.label] as string}</a>
              </li>`,
          )}
        </ul>
      </nav>
      ${body}
      <div class="account-bar">
        <p class="muted small">${t.signedInAs(frame.email)}</p>
        <form method="post" action="/logout">
          <input type="hidden" name="csrf_token" value="${frame.logoutCsrfToken}" />
          <button type="submit" class="small">${t.signOut}</button>
        </form>
      </div>
    </div>`,
    options,
  )
}
