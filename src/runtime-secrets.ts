import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
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
    const path = join(config.dataDir, file)
    if (existsSync(path)) return readFileSync(path, 'utf8').trim()
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
    const value = newSecret()
    writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' })
    chmodSync(path, 0o600)
    return value
  }
  return {
    adminToken: resolve('adminToken', config.adminToken),
    cookieSecret: resolve('cookieSecret', config.cookieSecret),
    keyEncryptionKey: resolve('keyEncryptionKey', config.keyEncryptionKey),
  }
}
