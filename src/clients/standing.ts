import { domainToUnicode } from 'node:url'
import type { ClientKind, StandingOverride } from '../db/database.js'

/**
 * An application's standing (issue 37): who stands behind it, in one vocabulary for every page,
 * the CLI, the admin API, the audit trail and the access token.
 *
 * - verified: the operator registered it, or verified one that came in by itself;
 * - vouched: it came with a Client ID Metadata Document, so the host of its client_id URL vouches
 *   for it (the host is its identity, its name only what it says of itself);
 * - unverified: it registered itself (RFC 7591), or the operator took its standing away.
 */
export type Standing = 'verified' | 'vouched' | 'unverified'

export const STANDINGS: readonly Standing[] = ['verified', 'vouched', 'unverified']

export type { StandingOverride }

/** What decides a standing: how the client came in, and what the operator said since (null: nothing). */
export interface StandingFacts {
  kind: ClientKind
  standingOverride: StandingOverride | null
}

const BY_KIND: Record<ClientKind, Standing> = {
  registered: 'verified',
  metadata_document: 'vouched',
  dynamic: 'unverified',
}

/** The client's standing: the operator's decision when there is one, else what its kind gives. */
export function standingOf(client: StandingFacts): Standing {
  return client.standingOverride ?? BY_KIND[client.kind]
}

/** The words that go with each standing, short enough for a badge, a table cell or a log line. */
export const STANDING_LABELS: Record<Standing, string> = {
  verified: 'Verified',
  vouched: 'Vouched for by its host',
  unverified: 'Unverified',
}

/** A host as people read it, and as DNS has it. */
export interface DisplayHost {
  /** Unicode for an IDN (xn-- labels decoded), else the host as written. */
  unicode: string
  /** The ASCII (Punycode) form, as in the URL. */
  ascii: string
  /** True when one of its labels mixes scripts (Latin with Cyrillic, …): show `ascii` beside it. */
  mixedScripts: boolean
}

/** How an application is named on every surface. */
export interface AppDisplay {
  /** The name to show: its own, or for a self-declared name that borrows another's, its host. */
  name: string
  /** The host(s) to show beside the name: one string, IDNs in Unicode with the ASCII form when scripts mix. */
  host: string
  /** Each host, both forms (the JSON and the CLI show them). */
  hosts: DisplayHost[]
  standing: Standing
  label: string
  /** The name was set aside because it borrows a reserved name (the service's, an operator-registered app's, a brand). */
  nameWithheld: boolean
}

/** What appDisplay reads of a client. */
export interface DisplayFacts extends StandingFacts {
  id: string
  name: string
  redirectUris: readonly string[]
}

/**
 * The display of an application. Its host is where it is known from: a metadata document's
 * client_id URL (the host vouches for it), otherwise the hosts its redirect URIs send the code to
 * (a private-use scheme shows as `scheme:`). `borrowed` (from names.ts) says the self-declared name
 * claims a reserved one: the host is shown as its name instead.
 */
export function appDisplay(client: DisplayFacts, borrowed = false): AppDisplay {
  const standing = standingOf(client)
  const hosts = hostsOf(client)
  // A device-only client (RFC 8628) registered without redirect URIs has no host to show.
  const host = hosts.length > 0 ? hosts.map(hostText).join(', ') : NO_HOST
  const nameWithheld = borrowed && standing !== 'verified'
  return {
    name: nameWithheld ? host : client.name,
    host,
    hosts,
    standing,
    label: STANDING_LABELS[standing],
    nameWithheld,
  }
}

/** What stands for the host of an application that has none (device-only, no redirect URI). */
export const NO_HOST = 'no web address'

/** One host as text: the Unicode form, and the ASCII form beside it when its scripts mix. */
export function hostText(host: DisplayHost): string {
  return host.mixedScripts ? `${host.unicode} (${host.ascii})` : host.unicode
}

function hostsOf(client: DisplayFacts): DisplayHost[] {
  if (client.kind === 'metadata_document') {
    const host = urlHost(client.id)
    if (host) return [displayHost(host)]
  }
  const seen = new Set<string>()
  for (const uri of client.redirectUris) seen.add(urlHost(uri) ?? uri)
  return [...seen].map(displayHost)
}

/** A URL's host with its port if it names one (one trailing dot removed), or `scheme:` for a URL without a host. */
function urlHost(value: string): string | undefined {
  try {
    const url = new URL(value)
    if (!url.hostname) return url.protocol
    return `${url.hostname.replace(/\.$/, '').toLowerCase()}${url.port ? `:${url.port}` : ''}`
  } catch {
    return undefined
  }
}

/** A host (`name` or `name:port`, ASCII as in a URL) in both forms. */
export function displayHost(ascii: string): DisplayHost {
  const [, name = ascii, port = ''] = /^(.*?)(:\d+)?$/.exec(ascii) ?? []
  const unicodeName = name.split('.').some((label) => label.startsWith('xn--')) ? domainToUnicode(name) : name
  if (unicodeName === '' || unicodeName === name) return { unicode: ascii, ascii, mixedScripts: false }
  return { unicode: unicodeName + port, ascii, mixedScripts: unicodeName.split('.').some(mixesScripts) }
}

/**
 * Whether a text holds letters of more than one script (UTS #39 §5.1, simplified: Common and
 * Inherited characters count for none; Han with Hiragana, Katakana or Hangul is one writing system).
 */
export function mixesScripts(text: string): boolean {
  const scripts = new Set<string>()
  for (const char of text) {
    const script = scriptOf(char)
    if (script) scripts.add(script)
  }
  const japanese = ['Han', 'Hiragana', 'Katakana']
  const korean = ['Han', 'Hangul']
  const all = [...scripts]
  if (all.length <= 1) return false
  return !(all.every((s) => japanese.includes(s)) || all.every((s) => korean.includes(s)))
}

const SCRIPTS = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Bengali',
  'Thai',
  'Georgian',
  'Cherokee',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Ethiopic',
  'Tamil',
  'Telugu',
  'Gujarati',
  'Gurmukhi',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Mongolian',
  'Coptic',
  'Runic',
  'Ogham',
] as const
const SCRIPT_PATTERNS = SCRIPTS.map((name) => [name, new RegExp(`\\p{Script=${name}}`, 'u')] as const)
const LETTER_OR_MARK = /[\p{L}\p{N}]/u
const COMMON = /[\p{Script=Common}\p{Script=Inherited}]/u

/** The script of a letter or digit (undefined for Common and Inherited: punctuation, digits, marks). */
export function scriptOf(char: string): string | undefined {
  if (!LETTER_OR_MARK.test(char) || COMMON.test(char)) return undefined
  for (const [name, pattern] of SCRIPT_PATTERNS) if (pattern.test(char)) return name
  return 'Other'
}
