import { describe, expect, it } from 'vitest'
import { MAX_PARAMETER_LENGTH, MAX_PARAMETERS, parseParameters } from '../../src/input/parameters.js'
import { waitText } from '../../src/web/pages/rate-limited.page.js'

describe('parseParameters (query strings and form bodies)', () => {
  it('parses like a form: + is a space, %XX decodes, a repeated name gives an array', () => {
    const parsed = parseParameters('a=1+2&b=%C3%A9&a=3&empty=')
    expect({ ...parsed }).toEqual({ a: ['1 2', '3'], b: 'é', empty: '' })
  })

  it('never throws on malformed encoding', () => {
    expect({ ...parseParameters('a=%E0%A4%A&b=%') }).toHaveProperty('b', '%')
  })

  it(`marks more than ${MAX_PARAMETERS} parameters instead of parsing them`, () => {
    const fifty = Array.from({ length: MAX_PARAMETERS }, (_, i) => `p${i}=v`).join('&')
    expect(Object.keys(parseParameters(fifty))).toHaveLength(MAX_PARAMETERS)
    expect(Object.keys(parseParameters(`${fifty}&one=more`))).toHaveLength(0)
  })

  it(`marks a value longer than ${MAX_PARAMETER_LENGTH} characters`, () => {
    expect(Object.keys(parseParameters(`a=${'x'.repeat(MAX_PARAMETER_LENGTH)}`))).toEqual(['a'])
    expect(Object.keys(parseParameters(`a=${'x'.repeat(MAX_PARAMETER_LENGTH + 1)}`))).toEqual([])
  })

  it('has no prototype to pollute', () => {
    const parsed = parseParameters('__proto__=x&constructor=y')
    expect(Object.getPrototypeOf(parsed)).toBeNull()
    expect(parsed['__proto__']).toBe('x')
  })
})

describe('waitText', () => {
  it('says the wait as a person would', () => {
    expect(waitText(1)).toBe('1 second')
    expect(waitText(60)).toBe('60 seconds')
    expect(waitText(90)).toBe('2 minutes')
    expect(waitText(900)).toBe('15 minutes')
    expect(waitText(3 * 3600)).toBe('3 hours')
  })
})
