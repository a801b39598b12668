import unhomoglyph from 'unhomoglyph'
import { mixesScripts, scriptOf } from './standing.js'

/**
 * The rules for a name an application gives itself (issue 37 "No borrowed names"): what text is
 * refused outright, and when it claims a name that is not its own (the service's, an app the
 * operator registered or verified, a brand the operator reserved).
 *
 * Look-alikes are found by UTS #39 skeletons: `unhomoglyph` maps each character by Unicode's
 * confusables.txt (the prototype mapping that skeletons are made of; nodeca's package, regenerated
 * from Unicode's data); skeleton(X) = NFD(map(NFD(X))) as UTS #39 §4 defines it.
 */

/** Format characters (bidi controls, zero-width joiners and spaces, …): invisible, so never in a name. */
const FORMAT = /\p{Cf}/u
const CONTROL = /\p{Cc}/u

/** UTS #39 §4 skeleton. */
export function skeleton(text: string): string {
  return unhomoglyph(text.normalize('NFD')).normalize('NFD')
}

/**
 * What a name is compared by: NFKC (full-width and other compatibility forms), skeleton, letter
 * case, and with spaces and punctuation gone ("Link-Auth" is "linkauth"). Two keys: case folded
 * before the skeleton ("LINKAUTH") and after it ("IinkauTh", whose capital I is an l).
 */
export function nameKeys(name: string): string[] {
  const text = name.normalize('NFKC')
  const strip = (s: string) => s.replace(/[\p{Z}\p{P}\s]/gu, '')
  return [...new Set([strip(skeleton(text.toLowerCase())), strip(skeleton(skeleton(text).toLowerCase()))])]
}

/** Why a self-declared name cannot be used at all, or undefined. */
export function nameTextProblem(name: string): string | undefined {
  if (CONTROL.test(name)) return 'client_name must be text on one line (no control characters)'
  if (FORMAT.test(name))
    return 'client_name must not contain invisible format characters (bidi controls, zero-width characters)'
  if (name.split(/\s+/).some(imitatesAnotherScript))
    return 'client_name must not mix scripts with look-alike letters (Unicode UTS #39 confusables)'
  return undefined
}

/**
 * A mixed-script confusable word (UTS #39 §5): it mixes scripts, and one of its letters is a
 * look-alike of a letter of another script the word also uses (a Cyrillic а among Latin letters).
 * "Ωmega" mixes Greek and Latin but imitates nothing, so it passes.
 */
function imitatesAnotherScript(word: string): boolean {
  if (!mixesScripts(word)) return false
  const scripts = new Set([...word].map(scriptOf).filter((s) => s !== undefined))
  return [...word].some((char) => {
    const own = scriptOf(char)
    if (own === undefined) return false
    return [...skeleton(char)].some((c) => {
      const looksLike = scriptOf(c)
      return looksLike !== undefined && looksLike !== own && scripts.has(looksLike)
    })
  })
}

/** The names self-declared ones may not borrow, by key (nameKeys). */
export class ReservedNames {
  private readonly keys = new Map<string, string>()

  constructor(names: Iterable<string>) {
    for (const name of names) for (const key of nameKeys(name)) if (key !== '') this.keys.set(key, name)
  }

  /** The reserved name this one equals or is confusable with, or undefined. */
  borrowedFrom(name: string): string | undefined {
    for (const key of nameKeys(name)) {
      const reserved = this.keys.get(key)
      if (reserved !== undefined) return reserved
    }
    return undefined
  }
}
