import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  axeViolations,
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoHorizontalScroll,
  expectNoSeriousA11yViolations,
  newPage,
  screenshot,
  seedBrowserWorld,
  startWorld,
  waitForCallback,
  virtualAuthenticator,
} from '../helpers/playwright.js'

/**
 * The rough edges a new user found on our pages (issue 40 §3), at phone and desktop widths: the
 * password page's checkbox beside its label and its cards without an empty band at the top; the
 * passkey rename row on one line; headings in order (axe heading-order); links in the theme's
 * colour; the one-click Continue page's "?" beside the application's name.
 */

const VIEWPORTS = [
  ['phone', { width: 390, height: 844 }],
  ['desktop', { width: 1280, height: 800 }],
] as const

type Box = { top: number; bottom: number; left: number; right: number }

const box = (page: Page, selector: string) =>
  page.evaluate<Box>(
    `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right } })()`,
  )

/** The gap between each card's top edge and the top of its first child's box (its text). */
const cardTopGaps = (page: Page) =>
  page.evaluate<number[]>(
    `[...document.querySelectorAll('.card')].map((c) => c.firstElementChild.getBoundingClientRect().top - c.getBoundingClientRect().top)`,
  )

/** The computed colour of every link in a card's text. */
const linkColours = (page: Page) =>
  page.evaluate<string[]>(
    `[...document.querySelectorAll('.card a:not(.button)')].map((a) => getComputedStyle(a).color)`,
  )

let world: BrowserWorld

describe.skipIf(!BROWSER_AVAILABLE)('rough edges of the pages (issue 40)', () => {
  beforeAll(async () => {
    world = await startWorld({ onLocalhost: true })
  })
  afterAll(async () => world?.close())

  for (const [label, viewport] of VIEWPORTS) {
    it(
      `the password and passkeys pages at ${label} width: checkbox beside its label, no empty band, rename on one row, headings in order`,
      async () => {
        const s = await seedBrowserWorld(world, 'Shortcut Stats')
        const { context, page } = await newPage(world.browser, { viewport })
        await virtualAuthenticator(context, page)
        await page.goto(`${world.base}/login?next=account-passkeys`)
        await page.getByLabel('Email').fill(s.email)
        await page.getByLabel('Password').fill(s.password)
        await page.getByRole('button', { name: 'Sign in', exact: true }).click()
        await page.getByRole('button', { name: 'Add a passkey' }).click()
        await page.getByRole('status').filter({ hasText: 'Your passkey was added' }).waitFor()
        await screenshot(page, `edges-${label}-passkeys`)

        const input = await box(page, 'li.passkey form[action$="/rename"] input[type=text]')
        const rename = await box(page, 'li.passkey form[action$="/rename"] button')
        const remove = await box(page, 'li.passkey form[action$="/remove"] button')
        const card = await box(page, 'li.passkey')
        const passkeysAxe = (await axeViolations(page)).map((v) => v.id)
        const passkeysGaps = await cardTopGaps(page)

        await page.goto(`${world.base}/account/password`)
        await page.getByRole('heading', { name: 'Change your password' }).waitFor()
        await screenshot(page, `edges-${label}-password`)
        // The rename row: the field takes the room; Rename and Remove side by side, level with the
        // field (desktop) or under it (phone), never floating lower to the right.
        expect(input.right - input.left).toBeGreaterThan((card.right - card.left) * 0.5)
        if (rename.top < input.bottom) {
          expect(Math.abs(rename.bottom - input.bottom)).toBeLessThanOrEqual(2)
          expect(rename.left).toBeGreaterThan(input.right)
        } else expect(Math.abs(rename.left - input.left)).toBeLessThanOrEqual(2)
        expect(Math.abs(remove.top - rename.top)).toBeLessThanOrEqual(2)
        expect(passkeysAxe).not.toContain('heading-order')
        expect(Math.max(...passkeysGaps)).toBeLessThanOrEqual(32)

        // The checkbox and its label on one line, the box first.
        const checkbox = await box(page, '#disconnect_apps')
        const checkboxLabel = await box(page, 'label[for=disconnect_apps]')
        expect(checkboxLabel.left).toBeGreaterThan(checkbox.right)
        expect(checkboxLabel.top).toBeLessThan(checkbox.bottom)
        // Each card's first heading starts at the card's padding (28 px), not ~40 px lower.
        expect(Math.max(...(await cardTopGaps(page)))).toBeLessThanOrEqual(32)
        expect((await axeViolations(page)).map((v) => v.id)).not.toContain('heading-order')
        await expectNoSeriousA11yViolations(page)
        await expectNoHorizontalScroll(page)

        // Links in a page's text take the theme's primary colour, not the browser's #0000EE.
        await page.goto(`${world.base}/account/reset-password?token=no-such-link`)
        const colours = await linkColours(page)
        expect(colours.length).toBeGreaterThan(0)
        for (const colour of colours) expect(colour).toBe('rgb(11, 92, 213)')
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )

    it(
      `the one-click Continue page at ${label} width: its "?" beside the name, its words those of its buttons`,
      async () => {
        const s = await seedBrowserWorld(world, 'A connected application with a long name')
        const { context, page } = await newPage(world.browser, { viewport })
        await page.goto(s.authorizeUrl('state-first'))
        await page.getByLabel('Email').fill(s.email)
        await page.getByLabel('Password').fill(s.password)
        await page.getByRole('button', { name: 'Sign in', exact: true }).click()
        await page.getByRole('button', { name: 'Allow' }).click()
        await waitForCallback(page, world)
        await page.goto(s.authorizeUrl('state-again'))
        const heading = page.getByRole('heading', { name: /^Continue to/ })
        await heading.waitFor()
        await screenshot(page, `edges-${label}-continue`)

        // The "?" ends the line the name's last word is on.
        const tops = await page.evaluate<number[]>(`(() => {
          const h = document.querySelector('h1')
          const walker = document.createTreeWalker(h, NodeFilter.SHOW_TEXT)
          const chars = []
          for (let n = walker.nextNode(); n; n = walker.nextNode())
            for (let i = 0; i < n.data.length; i++) if (n.data[i].trim()) chars.push([n, i])
          return chars.slice(-2).map(([n, i]) => {
            const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1)
            return r.getBoundingClientRect().top
          })
        })()`)
        expect(tops).toHaveLength(2)
        expect(Math.abs(tops[1]! - tops[0]!)).toBeLessThanOrEqual(8)
        const text = (await page.locator('section.consent').textContent()) ?? ''
        expect(text).not.toContain('If you allow')
        expect(text).not.toContain('Allowing')
        expect(text).toContain('Continuing sends you back to')
        await expectNoSeriousA11yViolations(page)
        await expectNoHorizontalScroll(page)
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )
  }
})
