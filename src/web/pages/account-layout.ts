import { html, type SafeHtml } from '../html.js'
import { page } from '../layout.js'

export type AccountSection = 'apps' | 'passkeys' | 'password' | 'activity'

const SECTIONS: readonly { key: AccountSection; href: string; label: string }[] = [
  { key: 'apps', href: '/account/apps', label: 'Connected apps' },
  { key: 'passkeys', href: '/account/passkeys', label: 'Passkeys' },
  { key: 'password', href: '/account/password', label: 'Password' },
  { key: 'activity', href: '/account/activity', label: 'Recent activity' },
]

export interface AccountFrame {
  section: AccountSection
  email: string
  /** The session's sign-out token (LOGOUT_BINDING): every account page offers Sign out. */
  logoutCsrfToken: string
  /** Whether the Passkeys section exists on this server (PASSKEYS). */
  passkeys: boolean
}

/** A moment in UTC, readable and unambiguous, inside <time> for machines. */
export function when(date: Date) {
  const iso = date.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
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
  const sections = SECTIONS.filter((s) => s.key !== 'passkeys' || frame.passkeys)
  return page(
    title,
    html`<div class="account">
      <nav class="account-nav" aria-label="Your account">
        <ul>
          ${sections.map(
            (s) =>
              html`<li>
                <a href="${s.href}"${s.key === frame.section ? html` aria-current="page"` : ''}>${s.label}</a>
              </li>`,
          )}
        </ul>
      </nav>
      ${body}
      <div class="account-bar">
        <p class="muted small">Signed in as <strong>${frame.email}</strong></p>
        <form method="post" action="/logout">
          <input type="hidden" name="csrf_token" value="${frame.logoutCsrfToken}" />
          <button type="submit" class="small">Sign out</button>
        </form>
      </div>
    </div>`,
    options,
  )
}
