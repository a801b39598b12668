import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDatabase, testEngine } from '../helpers/database.js'
import { freePort } from '../helpers/net.js'
import {
  killStartedServers,
  type ServerProcess,
  seededDataDir,
  startServer,
  waitForHealth,
} from '../helpers/server-process.js'

/**
 * What stops the server before it serves, with one line a person can act on: a DATA_DIR another
 * process holds (two PGlite engines on one folder overwrite each other), a port already taken.
 */

const folders: string[] = []
const servers: Server[] = []
afterAll(() => {
  killStartedServers()
  for (const server of servers) server.close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function freshDataDir(): string {
  const folder = mkdtempSync(join(tmpdir(), 'linkauth-refusals-'))
  folders.push(folder)
  return folder
}

/** A DATA_DIR with a migrated database already in it: for the refusals that are not about a first start. */
async function usedDataDir(): Promise<string> {
  const folder = await seededDataDir('linkauth-refusals-')
  folders.push(folder)
  return folder
}

async function ports() {
  return { PORT: String(await freePort()), ADMIN_PORT: String(await freePort()) }
}

async function listening(port: string, host = '127.0.0.1'): Promise<boolean> {
  try {
    await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/healthz`)
    return true
  } catch {
    return false
  }
}

async function occupy(port: string): Promise<Server> {
  const server = createServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(Number(port), '127.0.0.1', resolve))
  return server
}

async function stop(running: ServerProcess): Promise<void> {
  running.child.kill('SIGTERM')
  expect(await running.exited).toBe(0)
}

/** An address of this machine other than loopback, where there is one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === 'IPv4')?.address

const lockFile = (dataDir: string) => join(dataDir, 'pglite.lock')
const holderPid = (dataDir: string) =>
  (JSON.parse(readFileSync(lockFile(dataDir), 'utf8')) as { pid: number }).pid
const inUse =
  /^linkauth: DATA_DIR \S+ is in use by another linkauth \(pid (\d+), lock file \S+pglite\.lock\); stop that one, or set DATA_DIR to another folder$/

/** unshare(1) can give a process its own PID and UTS namespaces (as root), as a container has. */
const canUnshare = spawnSync('unshare', ['-p', '-f', '-u', '--mount-proc', 'true']).status === 0

/**
 * lockPGliteDir in a process of its own PID namespace (pid 1) under its own host name: prints
 * `locked` and holds the lock until stdin closes, or prints who holds it.
 */
function inContainer(host: string, dir: string) {
  const script = `
    import { lockPGliteDir } from './src/db/pglite-lock.ts'
    try {
      const lock = await lockPGliteDir(${JSON.stringify(dir)})
      console.log('locked')
      process.stdin.resume().on('end', () => { lock.release(); process.exit(0) })
    } catch (err) {
      console.log(err.holder ? 'refused ' + err.holder : String(err))
    }`
  const child = spawn(
    'unshare',
    [
      '-p',
      '-f',
      '-u',
      '--mount-proc',
      '--kill-child',
      'sh',
      '-c',
      `hostname ${host} && exec "$0" --import tsx --input-type=module -e "$1"`,
      process.execPath,
      script,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => (await lines.next()).value as string
  const exited = new Promise((resolve) => child.on('exit', resolve))
  return { child, next, exited }
}

describe('one process per DATA_DIR', () => {
  it('listens on loopback by default; a second process on the same DATA_DIR stops with one line and never opens it; the lock goes on a clean stop', async () => {
    const dataDir = await usedDataDir()
    const firstPorts = await ports()
    const first = startServer({ DATA_DIR: dataDir, ...firstPorts })
    await waitForHealth(`http://127.0.0.1:${firstPorts.PORT}/healthz`, first)
    expect(holderPid(dataDir)).toBe(first.child.pid)
    // Without HOST, the embedded quick start is reachable from this machine only.
    expect(first.output()).toContain(`Server listening at http://127.0.0.1:${firstPorts.PORT}`)
    if (external) expect(await listening(firstPorts.PORT, external)).toBe(false)

    const secondPorts = await ports()
    const second = startServer({ DATA_DIR: dataDir, ...secondPorts })
    expect(await second.exited).toBe(1)
    const line = second.output().trim()
    expect(line).toMatch(inUse)
    expect(inUse.exec(line)![1]).toBe(String(first.child.pid))
    // Its whole output is that one line: a listener it had opened would have logged "Server
    // listening", and a stack trace would show. The first one still answers.
    expect((await fetch(`http://127.0.0.1:${firstPorts.PORT}/readyz`)).status).toBe(200)

    // npm run migrate is refused too, rather than writing beside the running engine.
    const migrate = spawnSync(process.execPath, ['--import', 'tsx', 'src/db/migrate-cli.ts'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir },
      encoding: 'utf8',
    })
    expect(migrate.status).toBe(1)
    expect(migrate.stderr.trim()).toBe(
      `linkauth migrate: DATA_DIR ${dataDir} is in use by a running linkauth (pid ${first.child.pid}), which migrates at start; stop it first`,
    )

    // The first one is untouched, and a clean stop leaves no lock behind.
    expect((await fetch(`http://127.0.0.1:${firstPorts.PORT}/readyz`)).status).toBe(200)
    await stop(first)
    expect(existsSync(lockFile(dataDir))).toBe(false)
  }, 120_000)

  it('of two processes starting at once on a fresh DATA_DIR, exactly one runs', async () => {
    const dataDir = freshDataDir()
    const [a, b] = [await ports(), await ports()]
    const both = [startServer({ DATA_DIR: dataDir, ...a }), startServer({ DATA_DIR: dataDir, ...b })]
    const refused = await Promise.race(both.map((p, i) => p.exited.then(() => i)))
    const winner = both[1 - refused]!
    expect(await both[refused]!.exited).toBe(1)
    expect(both[refused]!.output().trim()).toMatch(inUse)
    await waitForHealth(`http://127.0.0.1:${[a, b][1 - refused]!.PORT}/healthz`, winner)
    expect(holderPid(dataDir)).toBe(winner.child.pid)
    await stop(winner)
  }, 120_000)

  it('a process that exits without closing the database leaves no lock behind', () => {
    const dataDir = freshDataDir()
    const script = `import { lockPGliteDir } from './src/db/pglite-lock.ts'; await lockPGliteDir(${JSON.stringify(join(dataDir, 'pglite'))}); process.exit(3)`
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).toBe(3)
    expect(existsSync(lockFile(dataDir))).toBe(false)
  })

  it('never takes over a lock held under another host name (another container on a shared volume); the line names the file to delete', async () => {
    const dataDir = freshDataDir()
    // pid 1 and a start time mean nothing here: they were another PID namespace's.
    const held = JSON.stringify({ pid: 1, startTime: '1', host: 'other-container' })
    writeFileSync(lockFile(dataDir), held)
    const refused = startServer({ DATA_DIR: dataDir, ...(await ports()) })
    expect(await refused.exited).toBe(1)
    expect(refused.output().trim()).toBe(
      `linkauth: DATA_DIR ${dataDir} is in use by another linkauth (pid 1 on host other-container, lock file ${lockFile(dataDir)}); stop that one, or set DATA_DIR to another folder; if host other-container (a machine or container) is really gone, delete ${lockFile(dataDir)}`,
    )
    expect(readFileSync(lockFile(dataDir), 'utf8')).toBe(held)
  }, 120_000)

  it.skipIf(!canUnshare)(
    'two containers (own PID and UTS namespaces, both pid 1) on one folder: the second is refused; a restarted one takes its own stale lock over',
    async () => {
      const dir = join(freshDataDir(), 'pglite')
      const a = inContainer('box-a', dir)
      expect(await a.next()).toBe('locked')
      const heldByA = readFileSync(`${dir}.lock`, 'utf8')
      expect(JSON.parse(heldByA)).toMatchObject({ pid: 1, host: 'box-a' })

      const b = inContainer('box-b', dir)
      expect(await b.next()).toBe('refused pid 1 on host box-a')
      expect(readFileSync(`${dir}.lock`, 'utf8')).toBe(heldByA)

      // box-a dies without removing its lock, and comes back: pid 1 again, another start time.
      a.child.stdin!.end()
      await a.exited
      writeFileSync(`${dir}.lock`, heldByA)
      const restarted = inContainer('box-a', dir)
      expect(await restarted.next()).toBe('locked')
      expect(readFileSync(`${dir}.lock`, 'utf8')).not.toBe(heldByA)
      restarted.child.stdin!.end()
      await restarted.exited
    },
    60_000,
  )

  it('takes over a lock whose process is gone', async () => {
    const dataDir = await usedDataDir()
    const gone = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => gone.on('exit', resolve))
    writeFileSync(lockFile(dataDir), JSON.stringify({ pid: gone.pid, startTime: '1' }))
    const p = await ports()
    const running = startServer({ DATA_DIR: dataDir, ...p })
    await waitForHealth(`http://127.0.0.1:${p.PORT}/healthz`, running)
    expect(holderPid(dataDir)).toBe(running.child.pid)
    await stop(running)
  }, 120_000)

  it('takes over a lock whose pid now belongs to another program, and one left half-written', async () => {
    const dataDir = await usedDataDir()
    // A live process that is not the one that wrote the lock: its start time differs.
    const other = spawn('sleep', ['60'])
    try {
      writeFileSync(lockFile(dataDir), JSON.stringify({ pid: other.pid, startTime: '1' }))
      const p = await ports()
      const running = startServer({ DATA_DIR: dataDir, ...p })
      await waitForHealth(`http://127.0.0.1:${p.PORT}/healthz`, running)
      expect(holderPid(dataDir)).toBe(running.child.pid)
      // A process killed outright leaves its lock; it is stale once that process is gone.
      running.child.kill('SIGKILL')
      await running.exited
      expect(existsSync(lockFile(dataDir))).toBe(true)
      writeFileSync(lockFile(dataDir), '{"pid":')
      const again = startServer({ DATA_DIR: dataDir, ...p })
      await waitForHealth(`http://127.0.0.1:${p.PORT}/healthz`, again)
      expect(holderPid(dataDir)).toBe(again.child.pid)
      await stop(again)
    } finally {
      other.kill()
    }
  }, 120_000)
})

describe('ports in use', () => {
  for (const variable of ['PORT', 'ADMIN_PORT'] as const) {
    it(`a ${variable} already in use stops the server with one line naming ${variable}; nothing stays listening`, async () => {
      const dataDir = await usedDataDir()
      const p = await ports()
      await occupy(p[variable])
      const running = startServer({ DATA_DIR: dataDir, ...p })
      expect(await running.exited).toBe(78)
      const errors = running
        .output()
        .split('\n')
        .filter((l) => !l.startsWith('{'))
      expect(errors.filter((l) => l !== '')).toEqual([
        `linkauth: configuration error: ${variable}: port ${p[variable]} on 127.0.0.1 is already in use by another program; stop it or set ${variable} to a free port`,
      ])
      // No stack trace anywhere, the JSON log lines included. (Whether the other listener had
      // started is moot once the process has exited: its exit with 78 is what shows it let go.)
      expect(running.output()).not.toMatch(/\s+at .+:\d+:\d+/)
      // The embedded database's lock went with it: the next start on this DATA_DIR is not refused.
      expect(existsSync(lockFile(dataDir))).toBe(false)
    }, 120_000)
  }

  it.skipIf(testEngine() !== 'postgres')(
    'under WORKERS, a port in use stops the primary too instead of restarting workers for ever',
    async () => {
      const database = await createTestDatabase()
      try {
        const p = await ports()
        await occupy(p.PORT)
        const running = startServer({
          WORKERS: '2',
          DATABASE_URL: database.url!,
          DATABASE_POOL_SIZE: '2',
          DATA_DIR: freshDataDir(),
          ...p,
        })
        expect(await running.exited).toBe(78)
        expect(running.output()).toContain(
          `linkauth: configuration error: PORT: port ${p.PORT} on 0.0.0.0 is already in use`,
        )
        expect(running.output()).not.toContain('worker died; starting another')
      } finally {
        await database.close()
      }
    },
    120_000,
  )
})
