import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/**
 * test/helpers/net.ts freePort, in processes of their own as vitest's workers are: within a run each
 * worker keeps to its own block of ports and never hands one out twice; two runs at once (the same
 * pool ids) start at different places in a block. The pool ids here (43, 44) are ones no worker of
 * a two-worker run has, so the ports these processes try are no real test's.
 */
const net = pathToFileURL(join(import.meta.dirname, '../helpers/net.ts')).href

async function portsOf(poolId: number, count: number): Promise<number[]> {
  const script =
    `import { freePort } from ${JSON.stringify(net)}\n` +
    `const ports = []\nfor (let i = 0; i < ${count}; i++) ports.push(await freePort())\n` +
    'console.log(JSON.stringify(ports))'
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, VITEST_POOL_ID: String(poolId) } },
  )
  return JSON.parse(stdout) as number[]
}

const blockOf = (port: number) => Math.floor((port - 10_000) / 500)

describe('freePort', () => {
  it('within a process: ports of one block, none twice; another pool id: another block', async () => {
    const [mine, other] = await Promise.all([portsOf(43, 100), portsOf(44, 100)])
    expect(new Set(mine).size).toBe(100)
    expect(new Set(mine.map(blockOf)).size).toBe(1)
    expect(new Set(other.map(blockOf)).size).toBe(1)
    expect(blockOf(other[0]!)).not.toBe(blockOf(mine[0]!))
  })

  it('two runs at once (processes with the same pool id) start at different ports of the block', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(() => portsOf(43, 1)))
    const firsts = runs.map(([port]) => port!)
    expect(new Set(firsts.map(blockOf)).size).toBe(1)
    // Each starts at a random one of 500 places: four alike would be a 1 in 500³ chance.
    expect(new Set(firsts).size).toBeGreaterThan(1)
  })
})
