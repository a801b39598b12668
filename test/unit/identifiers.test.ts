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
})
