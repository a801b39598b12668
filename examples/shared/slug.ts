import { randomInt } from 'node:crypto'

/** A custom slug: 3 to 64 letters, digits, `-` or `_`, starting and ending with a letter or digit. */
export const SLUG_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{1,62})[A-Za-z0-9]$/

/**
 * Paths of this service and words that would mislead as a short link, compared without case. A
 * slug is the first path segment of the short URL, so it must never shadow a route.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'api',
  'healthz',
  'readyz',
  'metrics',
  'openapi',
  'admin',
  'account',
  'login',
  'logout',
  'oauth',
  'static',
  'assets',
  'favicon',
  'robots',
  'well-known',
  'links',
  'tags',
  'stats',
  'help',
  'about',
  'docs',
  'www',
])

export function slugProblem(slug: string): string | undefined {
  if (!SLUG_PATTERN.test(slug))
    return '3 to 64 letters, digits, "-" or "_", starting and ending with a letter or digit'
  if (RESERVED_SLUGS.has(slug.toLowerCase())) return `"${slug}" is reserved; choose another slug`
  return undefined
}

/** Lower-case letters and digits without look-alikes (0/o, 1/l/i), for slugs people may type. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
export const RANDOM_SLUG_LENGTH = 8

/** 8 characters of a 31-letter alphabet: 8.5 × 10^11 slugs, so collisions stay rare and are retried. */
export function randomSlug(): string {
  let slug = ''
  for (let i = 0; i < RANDOM_SLUG_LENGTH; i++) slug += ALPHABET[randomInt(ALPHABET.length)]
  return slug
}
