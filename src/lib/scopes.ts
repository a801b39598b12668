/** The scope table of the service spec (§2): the only scopes that exist, with what each allows. */
export const SCOPE_DESCRIPTIONS = {
  'links:read': 'Read your short links, tags and statistics',
  'links:write': 'Create, modify and delete your short links',
  'ecommerce:write': 'Manage your e-commerce links and conversion tracking',
  'products:sync': 'Synchronise your product catalogue from an online shop',
} as const

export type Scope = keyof typeof SCOPE_DESCRIPTIONS

export const ALL_SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as Scope[]

export function isKnownScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_DESCRIPTIONS, value)
}

/** A scope in plain words for a person (consent and connected-apps pages); an unknown one as it is. */
export function describeScope(scope: string): string {
  return isKnownScope(scope) ? SCOPE_DESCRIPTIONS[scope] : scope
}

/**
 * Parses a scope parameter (RFC 6749 §3.3: space-delimited, case-sensitive).
 * Returns null when the string breaks the grammar (empty, leading/trailing or double spaces, bad characters).
 * Duplicates collapse; the result is in the table's order so that order in the request never matters.
 */
export function parseScopeParameter(value: string): string[] | null {
  if (!/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/.test(value)) return null
  return normalizeScopes(value.split(' '))
}

/** Known scopes first in table order, then unknown ones in the order given, without duplicates. */
export function normalizeScopes(scopes: readonly string[]): string[] {
  const unique = [...new Set(scopes)]
  const known = ALL_SCOPES.filter((s) => unique.includes(s))
  const unknown = unique.filter((s) => !isKnownScope(s))
  return [...known, ...unknown]
}

export function formatScopes(scopes: readonly string[]): string {
  return normalizeScopes(scopes).join(' ')
}

export function isSubset(requested: readonly string[], allowed: readonly string[]): boolean {
  return requested.every((s) => allowed.includes(s))
}

/** The scopes of `scopes` that `served` has too, in the order of `scopes` (an API's share of a grant). */
export function commonScopes(scopes: readonly string[], served: readonly string[]): string[] {
  return scopes.filter((s) => served.includes(s))
}
