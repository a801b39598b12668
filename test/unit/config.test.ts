import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      issuer: 'http://localhost:3000',
      databaseUrl: undefined,
      dataDir: './.data',
      adminPort: 3001,
      adminHost: '127.0.0.1',
      logLevel: 'info',
      authCodeTtl: 60,
      accessTokenTtl: 600,
      refreshTokenTtl: 30 * 24 * 3600,
      refreshTokenAbsoluteTtl: 180 * 24 * 3600,
      accessTokenAudience: 'http://localhost:3000/api',
      signingAlg: 'ES256',
      trustProxy: false,
      eventsMaxWaitSeconds: 25,
      eventStreamIdleSeconds: 600,
    })
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('listens on loopback on the embedded database, on every interface on PostgreSQL, unless HOST says', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '' }).host).toBe('127.0.0.1')
    expect(loadConfig({ DATABASE_URL: 'postgres://u@db/linkauth' }).host).toBe('0.0.0.0')
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
    expect(loadConfig({ HOST: '::1', DATABASE_URL: 'postgres://u@db/linkauth' }).host).toBe('::1')
  })

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      ISSUER: 'https://auth.example.com/',
      DATABASE_URL: 'postgres://u@db/linkauth',
      ADMIN_PORT: '9001',
      ADMIN_TOKEN: 'a'.repeat(40),
      AUTH_CODE_TTL: '30',
      ACCESS_TOKEN_TTL: '300',
      REDIS_URL: 'redis://127.0.0.1:6379',
      TRUST_PROXY: 'true',
      ACCESS_TOKEN_AUDIENCE: 'https://api.example.com',
      SIGNING_ALG: 'EdDSA',
      EVENTS_MAX_WAIT_SECONDS: '10',
      EVENT_STREAM_IDLE_SECONDS: '60',
    })
    expect(c).toMatchObject({
      port: 8080,
      issuer: 'https://auth.example.com',
      databaseUrl: 'postgres://u@db/linkauth',
      adminPort: 9001,
      authCodeTtl: 30,
      accessTokenTtl: 300,
      redisUrl: 'redis://127.0.0.1:6379',
      trustProxy: true,
      accessTokenAudience: 'https://api.example.com',
      signingAlg: 'EdDSA',
      eventsMaxWaitSeconds: 10,
      eventStreamIdleSeconds: 60,
    })
  })

  it.each([
    [{ PORT: 'abc' }, /^PORT: expected a whole number, got "abc"$/],
    [{ PORT: '70000' }, /^PORT: expected a number ≤ 65535, got "70000"$/],
    [{ PORT: '1.5' }, /^PORT: expected .*got "1\.5"$/],
    [{ ISSUER: 'ftp://x' }, /^ISSUER: expected an http\(s\) URL/],
    [{ ISSUER: 'https://a.example/?q=1' }, /^ISSUER: expected an http\(s\) URL without query or fragment/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: expected a postgres:\/\/ connection URL/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: expected one of "fatal", "error"/],
    [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN: expected at least 32 characters, got \(hidden\)$/],
    [{ KEY_ENCRYPTION_KEY: 'nothex' }, /^KEY_ENCRYPTION_KEY: expected 32 bytes as 64 hex characters/],
    [{ AUTH_CODE_TTL: '0' }, /^AUTH_CODE_TTL: expected a number ≥ 1/],
    [{ TRUST_PROXY: 'maybe' }, /^TRUST_PROXY: expected one of/],
    [{ WORKERS: '2' }, /^WORKERS: expected 1 without DATABASE_URL/],
    [{ WORKERS: 'many', DATABASE_URL: 'postgres://x/y' }, /^WORKERS: expected/],
    [{ SIGNING_ALG: 'HS256' }, /^SIGNING_ALG: expected one of "ES256", "EdDSA", "RS256"/],
    [{ REFRESH_TOKEN_TTL: '100', REFRESH_TOKEN_ABSOLUTE_TTL: '50' }, /^REFRESH_TOKEN_ABSOLUTE_TTL:/],
    [{ EVENTS_MAX_WAIT_SECONDS: '51' }, /^EVENTS_MAX_WAIT_SECONDS: expected a number ≤ 50/],
    [{ EVENTS_MAX_WAIT_SECONDS: '0' }, /^EVENTS_MAX_WAIT_SECONDS: expected a number ≥ 1/],
    [{ EVENT_STREAM_IDLE_SECONDS: '49' }, /^EVENT_STREAM_IDLE_SECONDS: expected at least twice/],
  ])('%j → one line naming the variable', (env, message) => {
    let error: unknown
    try {
      loadConfig(env)
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message).not.toContain('\n')
  })

  it('never prints a secret value in its error', () => {
    expect(() => loadConfig({ COOKIE_SECRET: 'my-secret-value' })).toThrow(/COOKIE_SECRET: .*\(hidden\)/)
  })
})
