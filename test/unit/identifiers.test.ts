import { describe, expect, it } from 'vitest'
import {
  hasNul,
  isBase64url256Bits,
  isClientId,
  isShortId,
  isUuid,
  newClientId,
  newResourceServerId,
  newSecret,
  newShortId,
  newTimeOrderedUuid,
  newUuid,
} from '../../src/lib/identifiers.js'
import { randomToken } from '../../src/lib/secrets.js'

describe('identifiers: each one the service makes is recognised, and nothing else is', () => {
  it.each([
    ['a secret', newSecret, isBase64url256Bits],
    ['a client id', newClientId, isClientId],
    ['a short id', newShortId, isShortId],
    ['a uuid', newUuid, isUuid],
    ['a time-ordered uuid', () => newTimeOrderedUuid(), isUuid],
  ] as const)('%s', (_name, make, recognise) => {
    const made = Array.from({ length: 50 }, make)
    expect(made.every((id) => recognise(id))).toBe(true)
    expect(new Set(made).size).toBe(made.length)
    expect(recognise(`${made[0]}\u0000`)).toBe(false)
    expect(recognise('')).toBe(false)
  })

  it('tells the shapes apart', () => {
    expect(isBase64url256Bits(newShortId())).toBe(false)
    expect(isShortId(newSecret())).toBe(false)
    expect(isUuid(newSecret())).toBe(false)
    expect(isClientId('short')).toBe(false)
    expect(isClientId('x'.repeat(65))).toBe(false)
    expect(isShortId(undefined)).toBe(false)
  })

  it('names resource servers recognisably', () => {
    expect(newResourceServerId()).toMatch(/^rs_[A-Za-z0-9_-]{16}$/)
  })

  it('finds a NUL anywhere', () => {
    expect(hasNul('abc')).toBe(false)
    expect(hasNul('a\u0000c')).toBe(true)
  })

  it('makes family ids as UUIDv7: version 7, RFC 9562 variant, ordered by their millisecond', () => {
    const at = Date.UTC(2026, 10, 27, 15, 0, 0, 123)
    const id = newTimeOrderedUuid(at)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at)
    const later = Array.from({ length: 50 }, (_, i) => newTimeOrderedUuid(at + 1 + i))
    expect([...later].sort()).toEqual(later)
    expect(later.every((next) => next > id)).toBe(true)
    expect(new Set(Array.from({ length: 1000 }, () => newTimeOrderedUuid(at))).size).toBe(1000)
  })

  it('hands each pooled random byte out once: across many refills, every token is new and its bits are balanced', () => {
    // Odd sizes so that tokens straddle where a refill would fall; 3,000 tokens are ~40 refills.
    const sizes = [32, 16, 12, 7, 48]
    const made = Array.from({ length: 3000 }, (_, i) => randomToken(sizes[i % sizes.length]))
    expect(new Set(made).size).toBe(made.length)
    made.forEach((token, i) => expect(Buffer.from(token, 'base64url')).toHaveLength(sizes[i % sizes.length]!))
    // A range handed out twice, or once already zeroed, would show as repeats or as a lack of ones.
    let ones = 0
    let bits = 0
    for (const token of made) {
      for (const byte of Buffer.from(token, 'base64url')) {
        for (let b = byte; b; b >>= 1) ones += b & 1
        bits += 8
      }
    }
    expect(Math.abs(ones / bits - 0.5)).toBeLessThan(0.01)
    expect(() => randomToken(0)).toThrow(RangeError)
    expect(() => randomToken(4096)).toThrow(RangeError)
  })
})
