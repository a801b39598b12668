import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { housekeepingCutoffs } from '../../src/housekeeping/housekeeping.service.js'

describe('housekeeping settings', () => {
  it('defaults: every 300 s, batches of 1000, a 7-day replay horizon; 0 turns the schedule off', () => {
    expect(loadConfig({})).toMatchObject({
      housekeepingInterval: 300,
      housekeepingBatchSize: 1000,
      housekeepingReplayHorizon: 7 * 24 * 3600,
    })
    expect(loadConfig({ HOUSEKEEPING_INTERVAL: '0', HOUSEKEEPING_REPLAY_HORIZON: '0' })).toMatchObject({
      housekeepingInterval: 0,
      housekeepingReplayHorizon: 0,
    })
  })

  it.each([
    [{ HOUSEKEEPING_INTERVAL: '-1' }, /^HOUSEKEEPING_INTERVAL: expected a number ≥ 0, got "-1"$/],
    [{ HOUSEKEEPING_INTERVAL: '86401' }, /^HOUSEKEEPING_INTERVAL: expected a number ≤ 86400/],
    [{ HOUSEKEEPING_INTERVAL: 'soon' }, /^HOUSEKEEPING_INTERVAL: expected a whole number/],
    [{ HOUSEKEEPING_BATCH_SIZE: '0' }, /^HOUSEKEEPING_BATCH_SIZE: expected a number ≥ 1/],
    [{ HOUSEKEEPING_REPLAY_HORIZON: '1.5' }, /^HOUSEKEEPING_REPLAY_HORIZON: expected/],
  ])('%j → one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })
})

describe('housekeepingCutoffs', () => {
  const now = new Date('2026-06-01T00:00:00Z')
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000)
  const idle = ago(600)

  it('expired rows a minute after expiry; families a horizon after they end; events at until', () => {
    const config = { ...loadConfig({}), housekeepingReplayHorizon: 3 * 24 * 3600 }
    expect(housekeepingCutoffs(now, config, idle)).toEqual({
      expiredBefore: ago(60),
      familiesRevokedBefore: ago(3 * 24 * 3600),
      familiesExpiredBefore: ago(3 * 24 * 3600),
      eventsUntil: now,
      streamsIdleSince: idle,
      auditBefore: ago(400 * 24 * 3600),
      // Sealed successors of spent refresh tokens: wiped once REFRESH_REUSE_WINDOW (10 s) is over.
      successorsRotatedBefore: ago(10),
    })
  })

  it('an expired family stays at least ACCESS_TOKEN_TTL + 60 s, however short the horizon', () => {
    const config = { ...loadConfig({ ACCESS_TOKEN_TTL: '900' }), housekeepingReplayHorizon: 0 }
    const cutoffs = housekeepingCutoffs(now, config, idle)
    expect(cutoffs.familiesRevokedBefore).toEqual(now)
    expect(cutoffs.familiesExpiredBefore).toEqual(ago(960))
  })
})
