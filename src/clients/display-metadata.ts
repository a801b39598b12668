import { z } from 'zod'

/** How long the description users read on the consent page may be. */
export const DESCRIPTION_MAX = 300
const URL_MAX = 2048

/** C0 and C1 control characters and DEL: nothing a one-line text or a link shown to users holds. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}

/**
 * A link shown to users (homepage, privacy policy, terms): https only, no user:password, no spaces,
 * at most 2048 characters. Null when acceptable, else why not. Stored exactly as given.
 */
export function displayUrlProblem(value: string): string | null {
  if (value.length > URL_MAX) return `must be at most ${URL_MAX} characters`
  if (/\s/.test(value) || hasControlCharacter(value)) return 'must not contain spaces or control characters'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute https URL'
  }
  if (url.protocol !== 'https:') return 'must be an https URL'
  if (url.username || url.password) return 'must not contain a user name or password'
  return null
}

const displayUrl = (what: string) =>
  z
    .string('an https URL')
    .superRefine((value, ctx) => {
      const problem = displayUrlProblem(value)
      if (problem) ctx.addIssue({ code: 'custom', message: problem })
    })
    .nullable()
    .optional()
    .meta({ description: `${what}: an https URL shown to users (opens in a new tab); null removes it.` })

/** The display metadata fields of a client, as the admin API takes them (create and update). */
export const displayMetadataFields = {
  homepage_url: displayUrl("The application's homepage"),
  privacy_policy_url: displayUrl("The application's privacy policy"),
  terms_url: displayUrl("The application's terms of service"),
  description: z
    .string('plain text')
    .trim()
    .min(1, 'must not be empty (null removes it)')
    .max(DESCRIPTION_MAX, `at most ${DESCRIPTION_MAX} characters`)
    .refine((text) => !hasControlCharacter(text), 'plain text on one line, no control characters')
    .nullable()
    .optional()
    .meta({
      description: `A short plain-text description users see on the consent page (at most ${DESCRIPTION_MAX} characters, shown as text, never as HTML); null removes it.`,
    }),
}

export type DisplayMetadataInput = {
  homepage_url?: string | null | undefined
  privacy_policy_url?: string | null | undefined
  terms_url?: string | null | undefined
  description?: string | null | undefined
}

/** API field names → the client's metadata (undefined: not given, left as it is). */
export function metadataOf(input: DisplayMetadataInput) {
  return {
    homepageUrl: input.homepage_url,
    privacyPolicyUrl: input.privacy_policy_url,
    termsUrl: input.terms_url,
    description: input.description,
  }
}
