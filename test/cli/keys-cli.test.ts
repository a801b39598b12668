import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encryptPrivateKey, parseKeyEncryptionKey } from '../../src/tokens/key-encryption.js'
import { generateSigningKey } from '../../src/tokens/key-material.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { cliAgainst } from '../helpers/cli.js'

/** linkauth keys list / revoke / rekey against a live admin API. */

let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await t.close()
})

const cli = cliAgainst(() => adminUrl)

describe('linkauth keys', () => {
  it('revoke and rekey explain themselves with --help; revoke needs a KID', async () => {
    const revokeHelp = await cli(['keys', 'revoke', '--help'])
    expect(revokeHelp.code).toBe(0)
    expect(revokeHelp.out).toContain('Usage: linkauth keys revoke KID [--json]')
    expect(revokeHelp.out).toMatch(/leaked/)
    const rekeyHelp = await cli(['keys', 'rekey', '--help'])
    expect(rekeyHelp.code).toBe(0)
    expect(rekeyHelp.out).toContain('Usage: linkauth keys rekey [--json]')
    expect(rekeyHelp.out).toContain('KEY_ENCRYPTION_KEY')
    const missing = await cli(['keys', 'revoke'])
    expect(missing.code).toBe(2)
    expect(missing.err).toContain('expected KID')
    const global = await cli(['--help'])
    expect(global.out).toMatch(/keys revoke\s+remove a leaked signing key/)
    expect(global.out).toMatch(/keys rekey\s+re-encrypt/)
  })

  it('revokes a retired key (--json), then the active one (a new key signs), refuses an unknown kid', async () => {
    const retired = t.services.signingKeys.activeSigningKey().kid
    await t.services.signingKeys.rotate()
    const active = t.services.signingKeys.activeSigningKey().kid

    const list = await cli(['keys', 'list'])
    expect(list.code).toBe(0)
    expect(list.out).toMatch(/^KID\s+ALG\s+STATE\s+SINCE\s+CREATED_AT/)
    expect(list.out).toMatch(new RegExp(`${retired}\\s+ES256\\s+retired`))
    expect(list.out).toMatch(new RegExp(`${active}\\s+ES256\\s+active`))

    const json = await cli(['keys', 'revoke', retired, '--json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.out)).toMatchObject({
      revoked: { kid: retired, state: 'revoked' },
      replacement: null,
    })

    const again = await cli(['keys', 'revoke', retired])
    expect(again.out).toBe(
      `key ${retired} was already revoked at ${JSON.parse(json.out).revoked.revoked_at} (nothing changed)`,
    )

    const human = await cli(['keys', 'revoke', active])
    expect(human.code).toBe(0)
    const replacement = t.services.signingKeys.activeSigningKey().kid
    expect(replacement).not.toBe(active)
    expect(human.out).toMatch(
      new RegExp(`^revoked key ${active} at \\S+\\nsigning now with key ${replacement}$`),
    )
    expect((await cli(['keys', 'list'])).out).toMatch(new RegExp(`${active}\\s+ES256\\s+revoked`))

    const unknown = await cli(['keys', 'revoke', 'A'.repeat(43)])
    expect(unknown.code).toBe(1)
    expect(unknown.err).toContain('No signing key with this kid.')
  })

  it('rekey re-encrypts, says PREVIOUS can go; with a key it cannot open, exits 1 naming it', async () => {
    const done = await cli(['keys', 'rekey'])
    expect(done.code).toBe(0)
    expect(done.out).toMatch(
      /^re-encrypted 0 keys \(\d+ already were\) under key-encryption key id [\w-]{16}\n/,
    )
    expect(done.out).toContain('KEY_ENCRYPTION_KEY_PREVIOUS can be removed')
    const json = JSON.parse((await cli(['keys', 'rekey', '--json'])).out)
    expect(json).toMatchObject({ complete: true, generated: false, unreadable: [] })

    const lost = generateSigningKey('ES256')
    await t.database.db
      .insertInto('signing_keys')
      .values({
        kid: lost.kid,
        alg: 'ES256',
        public_jwk: JSON.stringify(lost.publicJwk),
        private_key_encrypted: encryptPrivateKey(
          lost.privateKeyPem,
          parseKeyEncryptionKey('9'.repeat(64)),
          lost.kid,
        ),
        created_at: new Date('2026-01-01T00:00:00Z'),
        retired_at: new Date('2026-01-02T00:00:00Z'),
      })
      .execute()
    const incomplete = await cli(['keys', 'rekey'])
    expect(incomplete.code).toBe(1)
    expect(incomplete.err).toContain(lost.kid)
    expect(incomplete.err).toContain('neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_PREVIOUS')
  })
})
