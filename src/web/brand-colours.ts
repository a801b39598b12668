import { contrastRatio, formatRatio, mix, towardsContrast } from './contrast.js'

/** WCAG 2.x AA for normal text (§1.4.3). */
export const AA_TEXT = 4.5

/** The cards accent-coloured links sit on (style.ts --card), light and dark. */
export const CARD = { light: '#ffffff', dark: '#161b22' } as const
/** The text a primary button may carry: white, or the dark theme's background. */
const BUTTON_TEXTS = ['#ffffff', '#0d1117'] as const

/** The colours style.ts derives from its primary one, for one colour scheme. */
export interface AccentColours {
  primary: string
  hover: string
  /** Text on a primary button: white or dark, whichever contrasts more. */
  text: string
  focus: string
  /** The pale (light) or deep (dark) tint behind notices and the app monogram. */
  tint: string
}

/** Why an accent colour cannot be used, in one line naming the ratio and the 4.5:1 needed. */
export function accentProblem(
  variable: string,
  accent: string,
  scheme: 'light' | 'dark',
): string | undefined {
  const card = CARD[scheme]
  const onCard = contrastRatio(accent, card)
  if (onCard < AA_TEXT)
    return `${variable}=${accent} has contrast ${formatRatio(onCard)} on ${card}; WCAG AA needs ${AA_TEXT}:1`
  const text = buttonText(accent)
  const onButton = contrastRatio(accent, text)
  if (onButton < AA_TEXT)
    return `${variable}=${accent} has contrast ${formatRatio(onButton)} with its button text ${text}; WCAG AA needs ${AA_TEXT}:1`
  return undefined
}

function buttonText(accent: string): string {
  const [white, dark] = BUTTON_TEXTS
  return contrastRatio(accent, white) >= contrastRatio(accent, dark) ? white : dark
}

/**
 * The light scheme's colours from an accent that passed accentProblem: hover and focus darker (more
 * contrast on white), a pale tint behind notices that still gives the accent 4.5:1.
 */
export function lightColours(accent: string): AccentColours {
  return {
    primary: accent,
    hover: mix(accent, '#000000', 0.15),
    text: buttonText(accent),
    focus: accent,
    tint: towardsContrast(mix(accent, '#ffffff', 0.9), '#ffffff', accent, AA_TEXT),
  }
}

/** The dark scheme's: hover and focus lighter, a deep tint, darkened until the accent keeps 4.5:1. */
export function darkColours(accent: string): AccentColours {
  const hover = mix(accent, '#ffffff', 0.2)
  return {
    primary: accent,
    hover,
    text: buttonText(accent),
    focus: hover,
    tint: towardsContrast(mix(CARD.dark, accent, 0.15), '#0d1117', accent, AA_TEXT),
  }
}

/**
 * A dark-scheme accent for an operator who gave only the light one: the accent lightened (towards
 * white, 5 % at a time) until it reaches 4.5:1 on the dark card. A colour that passes on white never
 * passes on #161b22, so one colour cannot serve both.
 */
export function derivedDarkAccent(accent: string): string {
  return towardsContrast(accent, '#ffffff', CARD.dark, AA_TEXT)
}

function declarations(c: AccentColours): string {
  return (
    `--primary: ${c.primary}; --primary-hover: ${c.hover}; --primary-text: ${c.text}; ` +
    `--focus: ${c.focus}; --accent-bg: ${c.tint};`
  )
}

/** The rules that put the brand's colours over style.ts's own (appended after it). */
export function paletteRules(palette: { light?: AccentColours; dark?: AccentColours }): string {
  return [
    palette.light ? `:root { ${declarations(palette.light)} }` : '',
    palette.dark ? `@media (prefers-color-scheme: dark) { :root { ${declarations(palette.dark)} } }` : '',
  ]
    .filter(Boolean)
    .join('\n')
}
