import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError } from './config.js'
import { newSecret } from './lib/identifiers.js'

export interface RuntimeSecrets {
  adminToken: string
  cookieSecret: string
  keyEncryptionKey: string
  /** KEY_ENCRYPTION_KEY_PREVIOUS, or (key in DATA_DIR) the key a rekey replaced, until it finished. */
  keyEncryptionKeyPrevious: string | undefined
}

const FILES = {
  adminToken: { env: 'ADMIN_TOKEN', file: 'admin-token' },
  cookieSecret: { env: 'COOKIE_SECRET', file: 'cookie-secret' },
  keyEncryptionKey: { env: 'KEY_ENCRYPTION_KEY', file: 'key-encryption-key' },
} as const

/** Beside key-encryption-key: the key a `keys rekey` replaced, kept until every private key is re-encrypted. */
const PREVIOUS_KEY_FILE = 'key-encryption-key.previous'

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, FILES.adminToken.file)
}

/**
 * The secrets the server needs. A value given in the environment wins; otherwise it is read from
 * DATA_DIR, or generated there once (mode 0600). On PostgreSQL in production they must be given,
 * because several instances must share them and DATA_DIR is not shared.
 */
export function resolveSecrets(config: Readonly<Config>): RuntimeSecrets {
  const mustBeGiven = config.databaseUrl !== undefined && config.env === 'production'
  const resolve = (key: keyof typeof FILES, given: string | undefined): string => {
    if (given) return given
    const { env, file } = FILES[key]
    if (mustBeGiven)
      throw new ConfigError(`${env}: required when DATABASE_URL is set and NODE_ENV=production`)
    return readOrCreate(config.dataDir, join(config.dataDir, file))
  }
  return {
    adminToken: resolve('adminToken', config.adminToken),
    cookieSecret: resolve('cookieSecret', config.cookieSecret),
    keyEncryptionKey: resolve('keyEncryptionKey', config.keyEncryptionKey),
    keyEncryptionKeyPrevious:
      config.keyEncryptionKeyPrevious ??
      (config.keyEncryptionKey ? undefined : readIfPresent(join(config.dataDir, PREVIOUS_KEY_FILE))),
  }
}

function readIfPresent(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined
}

/** Writes a secret file whole or not at all: a file of our own, then renamed over the old one. */
function replaceFile(path: string, value: string): void {
  const ownFile = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(ownFile, `${value}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(ownFile, 0o600)
  renameSync(ownFile, path)
}

/**
 * Where the key-encryption key lives when the server made it itself (DATA_DIR, no KEY_ENCRYPTION_KEY):
 * `linkauth keys rekey` then makes the new key too. The old key is written to
 * key-encryption-key.previous before the new one replaces key-encryption-key, so that a process
 * stopped at any point starts again with both, and the previous file goes once every private key
 * is re-encrypted.
 */
export interface KeyEncryptionKeyStore {
  /** Makes and stores a new key; `current` is the one in use now. */
  replace(current: string): { current: string; previous: string }
  /** Every private key is under the current key: the previous one is deleted. */
  forgetPrevious(): void
}

/** The store when the key comes from DATA_DIR; undefined when KEY_ENCRYPTION_KEY is given (the operator owns it). */
export function keyEncryptionKeyStore(config: Readonly<Config>): KeyEncryptionKeyStore | undefined {
  if (config.keyEncryptionKey) return undefined
  const currentFile = join(config.dataDir, FILES.keyEncryptionKey.file)
  const previousFile = join(config.dataDir, PREVIOUS_KEY_FILE)
  return {
    replace(current) {
      const next = newSecret()
      replaceFile(previousFile, current)
      replaceFile(currentFile, next)
      return { current: next, previous: current }
    },
    forgetPrevious() {
      rmSync(previousFile, { force: true })
    },
  }
}

/**
 * Two processes can start at once on a fresh DATA_DIR (before either holds the PGlite lock, and on
 * PostgreSQL there is no lock). The secret is written to a file of this process's own and then
 * linked into place: link is atomic and fails with EEXIST if another process got there first, so
 * the file is never seen half-written, and the loser uses the winner's value.
 */
function readOrCreate(dataDir: string, path: string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const value = newSecret()
  const ownFile = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(ownFile, `${value}\n`, { mode: 0o600, flag: 'wx' })
  try {
    chmodSync(ownFile, 0o600)
    linkSync(ownFile, path)
    return value
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(path, 'utf8').trim()
    throw err
  } finally {
    unlinkSync(ownFile)
  }
}
