import { describe, expect, it } from 'vitest'
import { redirectUriOrigin, redirectUriProblem } from '../../src/clients/redirect-uri.js'
import { isValidCodeVerifier, isValidS256Challenge, s256Challenge, verifyS256 } from '../../src/lib/pkce.js'
import { formatScopes, isSubset, parseScopeParameter } from '../../src/lib/scopes.js'
import { constantTimeEqual, randomToken, sha256 } from '../../src/lib/secrets.js'
import { redactUrl } from '../../src/logger.js'
import { escapeHtml, html } from '../../src/web/html.js'

describe('pkce', () => {
  it('matches the RFC 7636 appendix B example', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
    expect(s256Challenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
    expect(verifyS256(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true)
    expect(verifyS256(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN')).toBe(false)
  })
  it('checks verifier and challenge shapes', () => {
    expect(isValidCodeVerifier('a'.repeat(43))).toBe(true)
    expect(isValidCodeVerifier('a'.repeat(128))).toBe(true)
    expect(isValidCodeVerifier('a'.repeat(42))).toBe(false)
    expect(isValidCodeVerifier('a'.repeat(129))).toBe(false)
    expect(isValidCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false)
    expect(isValidCodeVerifier(`${'a'.repeat(42)}~`)).toBe(true)
    expect(isValidS256Challenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true)
    expect(isValidS256Challenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=')).toBe(false)
    expect(isValidS256Challenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM')).toBe(false)
  })
})

describe('scopes', () => {
  it('parses space-separated scopes into table order', () => {
    expect(parseScopeParameter('links:write links:read')).toEqual(['links:read', 'links:write'])
    expect(parseScopeParameter('links:read links:read')).toEqual(['links:read'])
    expect(parseScopeParameter('links:read other')).toEqual(['links:read', 'other'])
    // A comma is legal in a scope-token (RFC 6749 §3.3): one unknown scope, refused later as invalid_scope.
    expect(parseScopeParameter('links:read,links:write')).toEqual(['links:read,links:write'])
  })
  it.each([
    '',
    ' links:read',
    'links:read ',
    'links:read  links:write',
    'links:read\tlinks:write',
    'a"b',
    'a\\b',
    'é',
  ])('refuses the malformed %j', (value) => expect(parseScopeParameter(value)).toBeNull())
  it('formats and compares', () => {
    expect(formatScopes(['products:sync', 'links:read'])).toBe('links:read products:sync')
    expect(isSubset(['links:read'], ['links:read', 'links:write'])).toBe(true)
    expect(isSubset(['links:read', 'products:sync'], ['links:read'])).toBe(false)
  })
})

describe('secrets', () => {
  it('makes 256-bit base64url tokens and hashes them', () => {
    const a = randomToken()
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(randomToken()).not.toBe(a)
    expect(sha256('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0')
  })
  it('compares in constant time, including different lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true)
    expect(constantTimeEqual('abc', 'abd')).toBe(false)
    expect(constantTimeEqual('abc', 'abcd')).toBe(false)
    expect(constantTimeEqual('', '')).toBe(true)
  })
})

describe('redirect URI registration rules', () => {
  it.each([
    'https://app.example/cb',
    'https://app.example:8443/cb?x=1',
    'http://localhost/cb',
    'http://localhost:8080/cb',
    'http://127.0.0.1:1234/cb',
    'http://[::1]:1234/cb',
    'com.example.app:/oauth2redirect',
  ])('accepts %s', (uri) => expect(redirectUriProblem(uri)).toBeNull())

  it.each([
    ['cb', 'absolute'],
    ['https://app.example/cb#x', 'fragment'],
    ['http://app.example/cb', 'loopback'],
    ['http://localhost.evil.example/cb', 'loopback'],
    ['javascript:alert(1)', 'javascript'],
    ['JAVASCRIPT:alert(1)', 'javascript'],
    ['data:text/html,x', 'data'],
    ['file:///etc/passwd', 'file'],
    ['https://u:p@app.example/cb', 'user information'],
    ['myapp:/cb', 'private-use'],
    ['https://app.example/c b', 'spaces'],
    ['https://app.example/cb\n', 'spaces'],
    ['https://app.example/\u0000', 'control'],
    [`https://app.example/${'a'.repeat(2001)}`, '2000'],
  ])('refuses %j (%s)', (uri, why) => expect(redirectUriProblem(uri)).toContain(why))
})

describe('where a redirect URI leads (one rule for CORS origins and the CSP form-action source)', () => {
  it.each([
    ['https://app.example/cb?x=1', { web: 'https://app.example' }],
    ['https://app.example:8443/a/b', { web: 'https://app.example:8443' }],
    ['http://127.0.0.1:9000/cb', { web: 'http://127.0.0.1:9000' }],
    ['HTTPS://APP.example/cb', { web: 'https://app.example' }],
    ['com.example.app:/callback', { scheme: 'com.example.app:' }],
    ['not a uri', undefined],
  ])('%s → %j', (uri, expected) => expect(redirectUriOrigin(uri)).toEqual(expected))
})

describe('logging helpers', () => {
  it('redacts secret query parameters and keeps the rest', () => {
    expect(redactUrl('/cb?code=abc&state=xyz&refresh_token=r&password=p')).toBe(
      '/cb?code=[Redacted]&state=xyz&refresh_token=[Redacted]&password=[Redacted]',
    )
    expect(redactUrl('/oauth/authorize?client_id=a&code_challenge=c')).toBe(
      '/oauth/authorize?client_id=a&code_challenge=c',
    )
  })

  it('redacts a secret parameter whatever the spelling of its name: percent-encoded, any case', () => {
    expect(redactUrl('/account/reset-password?to%6Ben=s1&%74oken=s2&%54OKEN=s3&Password=s4#x')).toBe(
      '/account/reset-password?to%6Ben=[Redacted]&%74oken=[Redacted]&%54OKEN=[Redacted]&Password=[Redacted]#x',
    )
    expect(redactUrl('/cb?state=%74oken&co%64e=s&bad%zz=1&refresh%5Ftoken=s')).toBe(
      '/cb?state=%74oken&co%64e=[Redacted]&bad%zz=1&refresh%5Ftoken=[Redacted]',
    )
  })
})

describe('html template', () => {
  it('escapes every interpolation', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;',
    )
    const name = '<script>alert(1)</script>'
    expect(html`<p>${name}</p>`.value).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>')
    expect(html`<ul>${['<a>', html`<li>ok</li>`]}</ul>`.value).toBe('<ul>&lt;a&gt;<li>ok</li></ul>')
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0')
  })
})
