import cluster from 'node:cluster'
import { availableParallelism } from 'node:os'
import type { Logger } from 'pino'

/** The exit code of a process stopped by a setting (sysexits.h); see main.ts. */
const EX_CONFIG = 78

/** How many server processes `WORKERS` asks for. */
export function workerCount(workers: number | 'auto'): number {
  return workers === 'auto' ? availableParallelism() : workers
}

/**
 * The primary process of a multi-process server: forks the workers (they share the listening
 * sockets), replaces one that dies, and on SIGTERM/SIGINT passes the signal on and waits for all.
 */
export function runPrimary(count: number, logger: Logger): void {
  let stopping = false
  // Counted by their exit events: cluster.workers drops a worker already at 'disconnect'.
  const alive = new Set<number>()
  const fork = () => alive.add(cluster.fork().id)
  for (let i = 0; i < count; i++) fork()
  cluster.on('exit', (worker, code, signal) => {
    alive.delete(worker.id)
    if (stopping) {
      if (alive.size === 0) {
        logger.info('stopped')
        process.exit(process.exitCode ?? 0)
      }
      return
    }
    if (code === EX_CONFIG) {
      // A setting keeps the workers from starting (a port in use): another one would fail the same way.
      stopping = true
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM')
      process.exitCode = EX_CONFIG
      if (alive.size === 0) process.exit(EX_CONFIG)
      return
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another')
    fork()
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    logger.info({ signal, workers: count }, 'stopping workers')
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
    setTimeout(() => process.exit(1), 15_000).unref()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  logger.info({ workers: count }, 'started workers')
}
