import { AUDIT_COMMANDS } from './audit-commands.js'
import { CLIENT_COMMANDS } from './client-commands.js'
import type { Command } from './command.js'
import { HOUSEKEEPING_COMMANDS } from './housekeeping-commands.js'
import { KEY_COMMANDS } from './key-commands.js'
import { PASSKEY_COMMANDS } from './passkey-commands.js'
import { RESOURCE_SERVER_COMMANDS } from './resource-server-commands.js'
import { USER_COMMANDS } from './user-commands.js'

/** Every command of `linkauth`, one module per noun; in this order in the global help. */
export const COMMANDS: Command[] = [
  ...CLIENT_COMMANDS,
  ...USER_COMMANDS,
  ...KEY_COMMANDS,
  ...HOUSEKEEPING_COMMANDS,
  ...AUDIT_COMMANDS,
  ...RESOURCE_SERVER_COMMANDS,
  ...PASSKEY_COMMANDS,
]
