import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * Ports for servers whose address must be known before they listen (an issuer naming its own port,
 * a child process told its PORT). They come from below the kernel's ephemeral range, so neither an
 * outgoing connection's local port nor another server's `listen(0)` can take one between the pick
 * and the listen: picking a port that `listen(0)` had just handed out lost that race once in CI
 * (EADDRINUSE). Each vitest worker has its own block of the range, and a process never hands out a
 * port twice, so two tests of one run, running at once, never pick the same port.
 *
 * A second run on the same machine (another vitest process) has the same pool ids, so its workers
 * get the same blocks. Each process therefore starts at a random place in its block and goes round
 * from there: two processes sharing a block walk it from different places, and the port one of
 * them listens on is seen taken by the other, so they are unlikely to pick one port at the same time.
 */
const BLOCK_SIZE = 500
const FIRST_PORT = 10_000

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)
    const start = Number(low)
    return Number.isInteger(start) && start > FIRST_PORT ? start : 32_768
  } catch {
    return 32_768
  }
}

function workerBlock(): { first: number; size: number } {
  const blocks = Math.max(1, Math.floor((ephemeralRangeStart() - FIRST_PORT) / BLOCK_SIZE))
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? process.pid)
  return { first: FIRST_PORT + (worker % blocks) * BLOCK_SIZE, size: BLOCK_SIZE }
}

const block = workerBlock()
/** Where this process starts in its block: random, so another run's process in the block starts elsewhere. */
const start = randomInt(block.size)
let next = 0

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A TCP port on 127.0.0.1 that is free now and that no other test of this run will be handed. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < block.size; tries++) {
    const port = block.first + ((start + next++) % block.size)
    if (await canListen(port)) return port
  }
  throw new Error(`no free port in ${block.first}-${block.first + block.size - 1}`)
}
