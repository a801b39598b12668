import { csrfToken, LOGOUT_BINDING } from '../web/csrf.js'
import type { Ui } from '../web/i18n/catalogue.js'
import type { AccountFrame, AccountSection } from '../web/pages/account-layout.js'
import type { SignInSession } from './session.service.js'

/** What every account page shows around its section: who is signed in, Sign out, the navigation. */
export function accountFrame(
  session: SignInSession,
  section: AccountSection,
  passkeys: boolean,
  ui: Ui,
): AccountFrame {
  return {
    section,
    email: session.email,
    logoutCsrfToken: csrfToken(session.csrfSecret, LOGOUT_BINDING),
    passkeys,
    ui,
  }
}
