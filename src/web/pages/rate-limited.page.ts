import { ENGLISH, type Ui } from '../i18n/catalogue.js'
import { duration } from '../i18n/format.js'
import { errorPage } from '../layout.js'

/** How long to wait, as a person would say it: "40 seconds", "3 minutes", "2 hours" (in `ui`'s language). */
export function waitText(seconds: number, ui: Ui = ENGLISH): string {
  return duration(ui.locale, seconds)
}

/** The sign-in form's alert when the attempts for this email are held back (the same for every email). */
export function tooManySignInAttempts(ui: Ui, retryAfterSeconds: number): string {
  return ui.t.tooManySignInAttempts(waitText(retryAfterSeconds, ui))
}

/** 429 for a person: what happened and how long to wait; nothing about which limit or key. */
export function rateLimitedPage(ui: Ui, retryAfterSeconds: number): string {
  return errorPage(ui, {
    title: ui.t.tooManyRequestsTitle,
    message: ui.t.tooManyRequestsMessage,
    advice: ui.t.tooManyRequestsAdvice(waitText(retryAfterSeconds, ui)),
  })
}
