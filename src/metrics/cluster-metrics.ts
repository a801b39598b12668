import cluster from 'node:cluster'
import { randomUUID } from 'node:crypto'
import { AggregatorRegistry, type Registry } from 'prom-client'
import type { MetricsSource } from './metrics.routes.js'

const ASK = 'linkauth:metrics?'
const ANSWER = 'linkauth:metrics!'

/**
 * In the primary of a multi-process server: answers a worker's request for the metrics of all
 * workers together (prom-client's AggregatorRegistry collects each worker's registry over IPC).
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: { type?: string; id?: string }) => {
    if (message?.type !== ASK) return
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id: message.id, text }),
      (err: unknown) => worker.send({ type: ANSWER, id: message.id, error: String(err) }),
    )
  })
}

/** In a worker: /metrics shows every worker's figures, asked of the primary, not just this one's. */
export function clusterMetricsSource(registry: Registry): MetricsSource {
  // Constructing one installs prom-client's listener that answers the primary's collection requests.
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries([registry])
  return {
    contentType: registry.contentType,
    text: () =>
      new Promise((resolve, reject) => {
        const id = randomUUID()
        const timer = setTimeout(() => {
          process.off('message', onMessage)
          reject(new Error('the primary did not answer with the cluster metrics'))
        }, 5_000)
        const onMessage = (message: { type?: string; id?: string; text?: string; error?: string }) => {
          if (message?.type !== ANSWER || message.id !== id) return
          clearTimeout(timer)
          process.off('message', onMessage)
          if (message.text !== undefined) resolve(message.text)
          else reject(new Error(message.error ?? 'no cluster metrics'))
        }
        process.on('message', onMessage)
        process.send!({ type: ASK, id })
      }),
  }
}
