import { CliError, EXIT_REFUSED } from './admin-client.js'
import { type Command, table } from './command.js'

interface SigningKeyJson {
  kid: string
  alg: string
  state: 'active' | 'next' | 'retired' | 'revoked'
  created_at: string
  activates_at: string
  retired_at: string | null
  revoked_at: string | null
}

interface RekeyJson {
  kek_id: string
  generated: boolean
  rekeyed: number
  already_current: number
  unreadable: string[]
  complete: boolean
}

/** When a key's state began (or, for the next key, begins). */
const keySince = (k: SigningKeyJson): string =>
  k.state === 'revoked' ? k.revoked_at! : k.state === 'retired' ? k.retired_at! : k.activates_at

/** `keys …`: the signing keys: listing, rotating, revoking, re-encrypting. */
export const KEY_COMMANDS: Command[] = [
  {
    name: 'keys list',
    usage: 'keys list',
    summary: 'list signing keys (active, next, retired, revoked)',
    options: {},
    run: (request) => request('GET', '/admin/keys'),
    show: (r) => {
      const keys = (r as { keys: SigningKeyJson[] }).keys
      return table([
        ['KID', 'ALG', 'STATE', 'SINCE', 'CREATED_AT'],
        ...keys.map((k) => [k.kid, k.alg, k.state, keySince(k), k.created_at]),
      ])
    },
  },
  {
    name: 'keys rotate',
    usage: 'keys rotate',
    summary: 'make a new signing key active; the old one stays published until its tokens expire',
    options: {},
    run: (request) => request('POST', '/admin/keys/rotate'),
    show: (r) => `new active key ${(r as { kid: string }).kid}`,
  },
  {
    name: 'keys revoke',
    usage: 'keys revoke KID',
    summary:
      'remove a leaked signing key now: out of the JWKS, refused by introspection, announced on the revocation feed',
    options: {},
    positionals: ['KID'],
    run: (request, _v, [kid]) => request('POST', `/admin/keys/${encodeURIComponent(kid!)}/revoke`),
    show: (r) => {
      const result = r as {
        revoked: SigningKeyJson
        replacement: SigningKeyJson | null
        already_revoked: boolean
      }
      if (result.already_revoked)
        return `key ${result.revoked.kid} was already revoked at ${result.revoked.revoked_at} (nothing changed)`
      return [
        `revoked key ${result.revoked.kid} at ${result.revoked.revoked_at}`,
        ...(result.replacement ? [`signing now with key ${result.replacement.kid}`] : []),
      ].join('\n')
    },
  },
  {
    name: 'keys rekey',
    usage: 'keys rekey',
    summary:
      're-encrypt every private signing key under KEY_ENCRYPTION_KEY (embedded mode: under a new key it makes)',
    options: {},
    run: async (request) => {
      const result = (await request('POST', '/admin/keys/rekey')) as RekeyJson
      if (!result.complete)
        throw new CliError(
          `re-encrypted ${result.rekeyed} keys, but ${result.unreadable.length} open with neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_PREVIOUS: ${result.unreadable.join(' ')}`,
          EXIT_REFUSED,
        )
      return result
    },
    show: (r) => {
      const result = r as RekeyJson
      return [
        `re-encrypted ${result.rekeyed} keys (${result.already_current} already were) under key-encryption key id ${result.kek_id}`,
        result.generated
          ? 'a new key-encryption key was made in DATA_DIR; the old one is deleted'
          : 'every key is under KEY_ENCRYPTION_KEY now: KEY_ENCRYPTION_KEY_PREVIOUS can be removed',
      ].join('\n')
    },
  },
]
