import { describe, expect, it } from 'vitest'
import { appDisplay, displayHost, mixesScripts, standingOf } from '../../src/clients/standing.js'

const app = (over: Partial<Parameters<typeof appDisplay>[0]> = {}) => ({
  id: 'abcdefgh12345678',
  name: 'Acceptance App',
  redirectUris: ['https://app.example/cb'],
  kind: 'registered' as const,
  standingOverride: null,
  ...over,
})

describe('standingOf', () => {
  it('follows the kind when the operator said nothing', () => {
    expect(standingOf({ kind: 'registered', standingOverride: null })).toBe('verified')
    expect(standingOf({ kind: 'metadata_document', standingOverride: null })).toBe('vouched')
    expect(standingOf({ kind: 'dynamic', standingOverride: null })).toBe('unverified')
  })

  it("lets the operator's decision win either way", () => {
    expect(standingOf({ kind: 'dynamic', standingOverride: 'verified' })).toBe('verified')
    expect(standingOf({ kind: 'metadata_document', standingOverride: 'verified' })).toBe('verified')
    expect(standingOf({ kind: 'registered', standingOverride: 'unverified' })).toBe('unverified')
    expect(standingOf({ kind: 'metadata_document', standingOverride: 'unverified' })).toBe('unverified')
  })
})

describe('appDisplay', () => {
  it("names a metadata-document app's host from its client_id URL, not its redirect URIs", () => {
    const shown = appDisplay(
      app({
        id: 'https://tool.example:8443/client.json',
        kind: 'metadata_document',
        redirectUris: ['http://127.0.0.1/cb'],
      }),
    )
    expect(shown).toMatchObject({ name: 'Acceptance App', host: 'tool.example:8443', standing: 'vouched' })
    expect(shown.label).toBe('Vouched for by its host')
  })

  it("names a self-registered app's host from where its codes go, each host once", () => {
    const shown = appDisplay(
      app({
        kind: 'dynamic',
        redirectUris: [
          'https://a.example/cb',
          'https://a.example/other',
          'https://b.example/cb',
          'com.example.app:/cb',
        ],
      }),
    )
    expect(shown.host).toBe('a.example, b.example, com.example.app:')
    expect(shown.standing).toBe('unverified')
    expect(shown.label).toBe('Unverified')
  })

  it('shows an IDN host in Unicode, with its ASCII form only when its scripts mix', () => {
    // "bücher" is all Latin; "pаypal" has a Cyrillic а among Latin letters.
    const latin = displayHost(new URL('https://bücher.example/').hostname)
    expect(latin).toEqual({ unicode: 'bücher.example', ascii: 'xn--bcher-kva.example', mixedScripts: false })
    const mixed = appDisplay(app({ kind: 'dynamic', redirectUris: ['https://p\u0430ypal.example/cb'] }))
    expect(mixed.hosts[0]).toMatchObject({ unicode: 'p\u0430ypal.example', mixedScripts: true })
    expect(mixed.host).toBe(`p\u0430ypal.example (${new URL('https://p\u0430ypal.example/').hostname})`)
    expect(mixed.host).toContain('xn--')
  })

  it('shows the host instead of a borrowed name, unless the operator verified the app', () => {
    expect(
      appDisplay(app({ kind: 'dynamic', redirectUris: ['https://phish.example/cb'] }), true),
    ).toMatchObject({
      name: 'phish.example',
      nameWithheld: true,
    })
    expect(
      appDisplay(
        app({ kind: 'dynamic', standingOverride: 'verified', redirectUris: ['https://x.example/cb'] }),
        true,
      ),
    ).toMatchObject({ name: 'Acceptance App', nameWithheld: false, standing: 'verified' })
  })
})

describe('mixesScripts', () => {
  it('counts letters of different scripts, not digits, punctuation or Japanese kana with kanji', () => {
    expect(mixesScripts('paypal-2')).toBe(false)
    expect(mixesScripts('p\u0430ypal')).toBe(true)
    expect(mixesScripts('пример')).toBe(false)
    expect(mixesScripts('日本語のテキスト')).toBe(false)
    expect(mixesScripts('Acme Ωmega')).toBe(true)
  })
})
