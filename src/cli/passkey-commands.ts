import { type Command, table } from './command.js'
import { USER_OPTIONS, userIdFrom } from './user-commands.js'

interface PasskeyJson {
  id: string
  name: string
  backup_eligible: boolean
  backed_up: boolean
  created_at: string
  last_used_at: string | null
}

/** `users passkeys` and `users remove-passkey`: a user's passkeys, and taking one away (a lost device). */
export const PASSKEY_COMMANDS: Command[] = [
  {
    name: 'users passkeys',
    usage: 'users passkeys (--email EMAIL | --id USER_ID)',
    summary: "list a user's passkeys and whether their password signs in",
    options: USER_OPTIONS,
    run: async (request, v) => {
      const id = await userIdFrom(request, v)
      return request('GET', `/admin/users/${encodeURIComponent(id)}/passkeys`)
    },
    show: (r) => {
      const { passkeys, password_sign_in } = r as { passkeys: PasskeyJson[]; password_sign_in: boolean }
      const sign = `password sign-in: ${password_sign_in ? 'on' : 'off (passkeys only)'}`
      if (passkeys.length === 0) return `no passkeys\n${sign}`
      const rows = passkeys.map((p) => [
        p.id,
        p.name,
        p.backup_eligible ? 'synced' : 'device',
        p.created_at,
        p.last_used_at ?? 'never',
      ])
      return `${table([['ID', 'NAME', 'KIND', 'CREATED_AT', 'LAST_USED_AT'], ...rows])}\n${sign}`
    },
  },
  {
    name: 'users remove-passkey',
    usage: 'users remove-passkey USER_ID PASSKEY_ID',
    summary: "remove one of a user's passkeys (it signs in no more)",
    options: {},
    positionals: ['USER_ID', 'PASSKEY_ID'],
    run: async (request, _v, [userId, passkeyId]) => {
      await request(
        'DELETE',
        `/admin/users/${encodeURIComponent(userId!)}/passkeys/${encodeURIComponent(passkeyId!)}`,
      )
      return { user_id: userId, passkey_id: passkeyId }
    },
    show: (r) => `removed passkey ${(r as { passkey_id: string }).passkey_id}`,
  },
]
