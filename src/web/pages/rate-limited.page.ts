import { errorPage } from '../layout.js'

/** How long to wait, as a person would say it: "40 seconds", "3 minutes", "2 hours". */
export function waitText(seconds: number): string {
  const say = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`
  if (seconds < 90) return say(seconds, 'second')
  if (seconds < 90 * 60) return say(Math.ceil(seconds / 60), 'minute')
  return say(Math.ceil(seconds / 3600), 'hour')
}

/** The sign-in form's alert when the attempts for this email are held back (the same for every email). */
export function tooManySignInAttempts(retryAfterSeconds: number): string {
  return `Too many sign-in attempts. Wait ${waitText(retryAfterSeconds)} and try again.`
}

/** 429 for a person: what happened and how long to wait; nothing about which limit or key. */
export function rateLimitedPage(retryAfterSeconds: number): string {
  return errorPage({
    title: 'Too many requests',
    message: 'There were too many requests from your network in a short time.',
    advice: `Wait ${waitText(retryAfterSeconds)}, then go back and try again.`,
  })
}
