import { configDefaults, defineConfig } from 'vitest/config'

/**
 * The files that need a process of their own: OpenTelemetry's instrumentations patch `pg`, Fastify and
 * undici as they load, and its tracer provider can be registered once per process, so a file that
 * starts tracing must be the first in its process to load them (README, Tests).
 */
const OWN_PROCESS = ['examples/links-api/test/tracing.test.ts', 'test/tracing/**/*.test.ts']
const ALL = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts']

export default defineConfig({
  // `@linkauth/resource` (its package.json exports) resolves to its TypeScript sources under test, never
  // a stale dist/; the rest are Vite's default server conditions less `module`. Vitest hands these to
  // Node as --conditions, and a `module` build is not always one Node can load (@opentelemetry/api's
  // imports files without their extensions): under test, packages resolve as they do in production.
  ssr: { resolve: { conditions: ['linkauth-source', 'node', 'development|production'] } },
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: two files at a time keeps PostgreSQL and argon2 from starving each other.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Each worker process runs file after file with the modules it already loaded: a fresh process
        // and module graph per file cost ~2 s of imports each, 40 % of the whole suite (issue 41).
        // Every file makes its own database, app and servers and closes them; none leans on another's.
        test: {
          name: 'shared',
          include: ALL,
          isolate: false,
          exclude: [...configDefaults.exclude, ...OWN_PROCESS],
        },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS } },
    ],
  },
})
