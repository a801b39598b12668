import { isResourceIdentifier, protectedResourceMetadataUrl } from '@linkauth/resource'
import { describe, expect, it } from 'vitest'

describe('protectedResourceMetadataUrl (RFC 9728 §3.1)', () => {
  it.each([
    // The RFC's own examples (§3.1, §3.2, §5.1).
    ['https://resource.example.com', 'https://resource.example.com/.well-known/oauth-protected-resource'],
    [
      'https://resource.example.com/resource1',
      'https://resource.example.com/.well-known/oauth-protected-resource/resource1',
    ],
    // A terminating slash after the host is removed before inserting; one after a path is kept.
    ['https://resource.example.com/', 'https://resource.example.com/.well-known/oauth-protected-resource'],
    ['https://api.example.com/links/', 'https://api.example.com/.well-known/oauth-protected-resource/links/'],
    ['https://api.example.com/?v=2', 'https://api.example.com/.well-known/oauth-protected-resource?v=2'],
    ['https://api.example.com/a?v=2', 'https://api.example.com/.well-known/oauth-protected-resource/a?v=2'],
    ['http://localhost:3002/api', 'http://localhost:3002/.well-known/oauth-protected-resource/api'],
    ['https://API.example.com:8443/x', 'https://API.example.com:8443/.well-known/oauth-protected-resource/x'],
  ])('%s → %s', (resource, url) => {
    expect(protectedResourceMetadataUrl(resource)).toBe(url)
  })

  it('refuses what is not a resource identifier', () => {
    expect(() => protectedResourceMetadataUrl('https://api.example.com/#x')).toThrow(TypeError)
    expect(isResourceIdentifier('https://api.example.com/a"b')).toBe(false)
    expect(isResourceIdentifier('http://127.0.0.1.example.com/')).toBe(false)
    expect(isResourceIdentifier(42)).toBe(false)
  })
})
