import { describe, expect, it } from 'vitest'
import { accentProblem, darkColours, derivedDarkAccent, lightColours } from '../../src/web/brand-colours.js'
import { contrastRatio, formatRatio, luminance, mix, parseHex } from '../../src/web/contrast.js'

/** WCAG 2.x contrast, checked against pairs whose ratios are published (WebAIM's checker, the WCAG examples). */
describe('contrast math', () => {
  it('parses #rgb and #rrggbb, any case, and nothing else', () => {
    expect(parseHex('#fff')).toEqual([255, 255, 255])
    expect(parseHex('#0B5CD5')).toEqual([11, 92, 213])
    for (const bad of ['fff', '#ffff', '#gggggg', 'red', '#12345', '']) expect(parseHex(bad)).toBeUndefined()
  })

  it('gives relative luminance 0 for black, 1 for white', () => {
    expect(luminance([0, 0, 0])).toBe(0)
    expect(luminance([255, 255, 255])).toBeCloseTo(1, 10)
  })

  const known: [string, string, number][] = [
    ['#000000', '#ffffff', 21],
    ['#ffffff', '#ffffff', 1],
    ['#767676', '#ffffff', 4.54], // the lightest grey passing AA on white
    ['#777777', '#ffffff', 4.48], // …and the first failing one
    ['#0000ff', '#ffffff', 8.59],
    ['#ff0000', '#ffffff', 4],
    ['#ffd700', '#ffffff', 1.4],
    ['#0b5cd5', '#ffffff', 6.02],
    ['#4493f8', '#161b22', 5.58], // the dark theme's own primary on its card
  ]
  for (const [a, b, ratio] of known) {
    it(`${a} on ${b} is ${ratio}:1, either way round`, () => {
      expect(contrastRatio(a, b)).toBeCloseTo(ratio, 1)
      expect(contrastRatio(b, a)).toBe(contrastRatio(a, b))
    })
  }

  it('prints a ratio rounded down, so that a failing one never reads as passing', () => {
    expect(formatRatio(contrastRatio('#777777', '#ffffff'))).toBe('4.47:1')
    expect(formatRatio(4.4999)).toBe('4.49:1')
    expect(formatRatio(21)).toBe('21:1')
  })

  it('mixes two colours channel by channel', () => {
    expect(mix('#000000', '#ffffff', 0.5)).toBe('#808080')
    expect(mix('#0b5cd5', '#0b5cd5', 0.3)).toBe('#0b5cd5')
    expect(mix('#102030', '#ffffff', 0)).toBe('#102030')
  })
})

describe('accent colours', () => {
  it('refuses an accent that fails on the card, naming its ratio and the 4.5:1 needed', () => {
    expect(accentProblem('BRAND_ACCENT', '#ffd700', 'light')).toBe(
      'BRAND_ACCENT=#ffd700 has contrast 1.4:1 on #ffffff; WCAG AA needs 4.5:1',
    )
    expect(accentProblem('BRAND_ACCENT_DARK', '#0b5cd5', 'dark')).toMatch(
      /^BRAND_ACCENT_DARK=#0b5cd5 has contrast 2\.\d+:1 on #161b22; WCAG AA needs 4\.5:1$/,
    )
    expect(accentProblem('BRAND_ACCENT', '#767676', 'light')).toBeUndefined()
    expect(accentProblem('BRAND_ACCENT_DARK', '#4493f8', 'dark')).toBeUndefined()
  })

  it('derives colours that all keep 4.5:1: button text, hover, the tint behind notices', () => {
    for (const accent of ['#0b5cd5', '#b0006a', '#1a7f37', '#767676', '#5b21b6']) {
      const light = lightColours(accent)
      expect(light.text).toBe('#ffffff')
      expect(contrastRatio(light.primary, light.text)).toBeGreaterThanOrEqual(4.5)
      expect(contrastRatio(light.hover, light.text)).toBeGreaterThanOrEqual(4.5)
      expect(contrastRatio(light.hover, '#ffffff')).toBeGreaterThan(contrastRatio(accent, '#ffffff'))
      expect(contrastRatio(light.primary, light.tint)).toBeGreaterThanOrEqual(4.5)

      const darkAccent = derivedDarkAccent(accent)
      expect(contrastRatio(darkAccent, '#161b22')).toBeGreaterThanOrEqual(4.5)
      const dark = darkColours(darkAccent)
      expect(dark.text).toBe('#0d1117')
      expect(contrastRatio(dark.primary, dark.text)).toBeGreaterThanOrEqual(4.5)
      expect(contrastRatio(dark.hover, dark.text)).toBeGreaterThanOrEqual(4.5)
      expect(contrastRatio(dark.primary, dark.tint)).toBeGreaterThanOrEqual(4.5)
    }
  })
})
