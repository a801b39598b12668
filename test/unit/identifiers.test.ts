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
  newUuid,
} from '../../src/lib/identifiers.js'

describe('identifiers: each one the service makes is recognised, and nothing else is', () => {
  it.each([
    ['a secret', newSecret, isBase64url256Bits],
    ['a client id', newClientId, isClientId],
    ['a short id', newShortId, isShortId],
    ['a uuid', newUuid, isUuid],
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
})
