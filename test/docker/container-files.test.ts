import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { loadConfig } from '../../src/config.js'
import { firstRunHint } from '../../src/first-run-hint.js'

/**
 * The Dockerfile and docker-compose.yml, checked without a Docker engine: what they would publish,
 * what they require, and what the image's start-up hint may suggest. Building the image and
 * `docker compose up` are not run here.
 */

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

const dockerfile = instructions(readFileSync('Dockerfile', 'utf8'))
/** The run stage: after the last FROM. */
const runStage = dockerfile.slice(dockerfile.findLastIndex((l) => l.startsWith('FROM ')))
const imageEnv = Object.fromEntries(
  runStage
    .filter((l) => l.startsWith('ENV '))
    .flatMap((l) => [...l.slice(4).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
)

interface Compose {
  services: Record<string, { environment?: Record<string, string>; ports?: string[] }>
}
const composeText = readFileSync('docker-compose.yml', 'utf8')
const compose = parse(composeText) as Compose

describe('the image', () => {
  it('listens publicly on every interface, the admin API on loopback only', () => {
    const config = loadConfig({ ...imageEnv, DATABASE_URL: 'postgres://u@db/linkauth' })
    expect(config.host).toBe('0.0.0.0')
    expect(config.adminHost).toBe('127.0.0.1')
    const exposed = runStage.filter((l) => l.startsWith('EXPOSE ')).flatMap((l) => l.split(/\s+/).slice(1))
    expect(exposed).toEqual([String(config.port)])
  })

  it('has the linkauth command its start-up hint names, on PATH', () => {
    expect(runStage).toContain('COPY bin ./bin')
    expect(runStage.some((l) => l.startsWith('COPY --from=build /app/dist ./dist'))).toBe(true)
    expect(runStage.some((l) => /ln -s \/app\/bin\/linkauth\.js \/usr\/local\/bin\/linkauth\b/.test(l))).toBe(
      true,
    )
    const hint = firstRunHint({ adminToken: undefined, dataDir: imageEnv.DATA_DIR! }, 'container')
    const commands = hint.split('\n').flatMap((l) => /:\s+(docker exec <container> \S+)/.exec(l)?.[1] ?? [])
    expect(new Set(commands)).toEqual(new Set(['docker exec <container> linkauth']))
    expect(hint).not.toContain('npm')
  })
})

describe('docker-compose.yml', () => {
  const linkauth = compose.services.linkauth!

  it('publishes the admin port on the host loopback interface only', () => {
    const adminPort = String(loadConfig(imageEnv).adminPort)
    const ports = linkauth.ports ?? []
    const admin = ports.filter((p) => p.split(':').at(-1) === adminPort)
    expect(admin).toEqual([`127.0.0.1:${adminPort}:${adminPort}`])
    expect(ports).toContain('3000:3000')
    // The published port reaches the admin API only because the compose file opts in.
    expect(linkauth.environment?.ADMIN_HOST).toBe('0.0.0.0')
    expect(compose.services.postgres?.ports).toBeUndefined()
  })

  it('requires POSTGRES_PASSWORD (no default password) and uses it in DATABASE_URL', () => {
    expect(composeText).not.toMatch(/\$\{POSTGRES_PASSWORD:-/)
    expect(compose.services.postgres?.environment?.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/)
    expect(linkauth.environment?.DATABASE_URL).toMatch(
      /^postgres:\/\/linkauth:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/linkauth$/,
    )
  })

  it("is satisfied by the README's .env recipe", () => {
    const required = new Set([...composeText.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]!))
    expect(required).toContain('POSTGRES_PASSWORD')
    const readme = readFileSync('README.md', 'utf8')
    const recipe = /^for v in ([\w ]+); do echo "\$v=\$\(openssl rand -hex 32\)"; done > \.env$/m.exec(readme)
    expect(recipe).not.toBeNull()
    const written = new Set(recipe![1]!.split(' '))
    for (const name of required) expect(written, name).toContain(name)
  })
})
