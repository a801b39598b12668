import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError } from './config.js'
import { newSecret } from './lib/identifiers.js'

export interface RuntimeSecrets {
  adminToken: string
  cookieSecret: string
  keyEncryptionKey: string
}

const FILES = {
  adminToken: { env: 'ADMIN_TOKEN', file: 'admin-token' },
  cookieSecret: { env: 'COOKIE_SECRET', file: 'cookie-secret' },
  keyEncryptionKey: { env: 'KEY_ENCRYPTION_KEY', file: 'key-encryption-key' },
} as const

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
