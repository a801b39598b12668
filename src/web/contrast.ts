/**
 * Colour contrast as WCAG 2.x defines it (§1.4.3, "relative luminance" and "contrast ratio"): the
 * arithmetic behind the brand's start-up check and the colours derived from an accent.
 */

export type Rgb = readonly [number, number, number]

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i

/** `#abc` or `#aabbcc` (any case) → its three channels, 0–255; undefined for anything else. */
export function parseHex(value: string): Rgb | undefined {
  const match = HEX.exec(value.trim())
  if (!match) return undefined
  const digits = match[1]!.length === 3 ? [...match[1]!].map((d) => d + d).join('') : match[1]!
  return [0, 2, 4].map((i) => parseInt(digits.slice(i, i + 2), 16)) as unknown as Rgb
}

/** Lower-case `#rrggbb`. */
export function toHex(rgb: Rgb): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`
}

function linear(channel: number): number {
  const c = channel / 255
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
}

/** WCAG relative luminance: 0 for black, 1 for white. */
export function luminance(rgb: Rgb): number {
  return 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
}

/** (lighter + 0.05) / (darker + 0.05): from 1 (same colour) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(rgbOf(a)), luminance(rgbOf(b))]
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05)
}

/** A ratio as people read it, rounded down so that a failing one never prints as passing: 4.49:1. */
export function formatRatio(ratio: number): string {
  return `${Math.floor(ratio * 100) / 100}:1`
}

/** `from` moved `amount` (0–1) of the way to `to`, channel by channel in sRGB. */
export function mix(from: string, to: string, amount: number): string {
  const [a, b] = [rgbOf(from), rgbOf(to)]
  return toHex(a.map((c, i) => c + (b[i]! - c) * amount) as unknown as Rgb)
}

/**
 * The first colour on the way from `from` to `to` (in steps of 5 %) whose contrast with `against`
 * reaches `needed`; `to` itself when none does before it.
 */
export function towardsContrast(from: string, to: string, against: string, needed: number): string {
  for (let step = 0; step <= 20; step++) {
    const colour = mix(from, to, step / 20)
    if (contrastRatio(colour, against) >= needed) return colour
  }
  return toHex(rgbOf(to))
}

function rgbOf(hex: string): Rgb {
  const rgb = parseHex(hex)
  if (!rgb) throw new TypeError(`not a hex colour: ${hex}`)
  return rgb
}
