import { defineConfig } from 'vitest/config'

export default defineConfig({
  // `@linkauth/resource` (its package.json exports) resolves to its TypeScript sources under test, never
  // a stale dist/; the rest are Vite's default server conditions less `module`. Vitest hands these to
  // Node as --conditions, and a `module` build is not always one Node can load (@opentelemetry/api's
  // imports files without their extensions): under test, packages resolve as they do in production.
  ssr: { resolve: { conditions: ['linkauth-source', 'node', 'development|production'] } },
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
