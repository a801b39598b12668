import { existsSync } from 'node:fs'

/**
 * Browser tests drive Debian's chromium through playwright-core (DESIGN §6); Playwright's own
 * browser downloads are never used. Without chromium the browser tests are skipped with one line
 * saying why, unless REQUIRE_BROWSER=1 (CI), where a missing browser fails the run.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
export const BROWSER_AVAILABLE = existsSync(CHROMIUM_PATH)
export const BROWSER_REQUIRED = process.env.REQUIRE_BROWSER === '1'
export const NO_BROWSER_REASON = `browser tests (test/browser) skipped: no chromium at ${CHROMIUM_PATH}; install it with 'apt-get install -y chromium' (REQUIRE_BROWSER=1 turns this skip into a failure)`

/** Throws when the browser is required but missing; otherwise says whether browser tests run. */
export function checkBrowser(): boolean {
  if (!BROWSER_AVAILABLE && BROWSER_REQUIRED) {
    throw new Error(`REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM_PATH}`)
  }
  return BROWSER_AVAILABLE
}
