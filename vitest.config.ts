import { defineConfig } from 'vitest/config'

export default defineConfig({
  // `@linkauth/resource` (its package.json exports) resolves to its TypeScript sources under test, never
  // a stale dist/; the rest are Vite's default server conditions.
  ssr: { resolve: { conditions: ['linkauth-source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: two files at a time keeps PostgreSQL and argon2 from starving each other.
    maxWorkers: 2,
  },
})
