import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

/**
 * docker-compose.yml as Compose itself reads it: `docker-compose config` (Debian's docker-compose,
 * which validates against the Compose schema and interpolates variables without a Docker engine).
 * Skipped with one line when it is not installed, unless REQUIRE_COMPOSE=1 (CI installs it).
 */

function composeTool(): string[] | undefined {
  for (const command of [['docker-compose'], ['docker', 'compose']]) {
    const probe = spawnSync(command[0]!, [...command.slice(1), 'version'], { encoding: 'utf8' })
    if (probe.status === 0) return command
  }
  if (process.env.REQUIRE_COMPOSE === '1')
    throw new Error('REQUIRE_COMPOSE=1 but docker-compose is not installed')
  console.log(
    "Compose validation skipped: no docker-compose; install it with 'apt-get install -y docker-compose' (REQUIRE_COMPOSE=1 turns this skip into a failure)",
  )
  return undefined
}

const tool = composeTool()
const secrets = {
  POSTGRES_PASSWORD: 'compose-password',
  ADMIN_TOKEN: 'compose-admin-token-0123456789abcdefghijk',
  COOKIE_SECRET: 'compose-cookie-secret-0123456789abcdefghi',
  KEY_ENCRYPTION_KEY: '9'.repeat(64),
}

function config(env: Record<string, string>) {
  return spawnSync(tool![0]!, [...tool!.slice(1), '-f', 'docker-compose.yml', 'config'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
  })
}

interface Port {
  published?: number | string
  target?: number | string
  host_ip?: string
}

/** Compose prints a port as "host_ip:published:target/proto" or as { published, target, host_ip }. */
function normalise(port: string | Port): Port {
  if (typeof port !== 'string') return { ...port, host_ip: port.host_ip ?? '' }
  const parts = port.replace(/\/tcp$/, '').split(':')
  const [target, published, hostIp] = parts.reverse()
  return { target, published, host_ip: hostIp ?? '' }
}

describe.skipIf(!tool)('docker-compose config', () => {
  it('accepts the file and resolves it: the admin port on the host loopback only, PostgreSQL unpublished', () => {
    const run = config(secrets)
    expect(run.status, run.stderr).toBe(0)
    const resolved = parse(run.stdout) as {
      services: Record<string, { ports?: (string | Port)[]; environment?: Record<string, string> }>
    }
    const ports = (resolved.services.linkauth?.ports ?? []).map(normalise)
    const admin = ports.filter((p) => String(p.target) === '3001')
    expect(admin).toHaveLength(1)
    expect(admin.every((p) => p.host_ip === '127.0.0.1' && String(p.published) === '3001')).toBe(true)
    expect(ports.find((p) => String(p.target) === '3000')).toBeDefined()
    expect(resolved.services.postgres?.ports).toBeUndefined()
    expect(resolved.services.linkauth?.environment?.DATABASE_URL).toBe(
      'postgres://linkauth:compose-password@postgres:5432/linkauth',
    )
  })

  it('refuses to resolve without each secret, naming it', () => {
    for (const name of Object.keys(secrets)) {
      const run = config(Object.fromEntries(Object.entries(secrets).filter(([k]) => k !== name)))
      expect(run.status, name).not.toBe(0)
      expect(run.stderr).toContain(`set ${name} in .env`)
    }
  })
})
