import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * Makes app.close() wait for handlers still running. A client that hangs up (a load generator
 * stopping, a browser closing its tab) does not stop its request's handler, and Node's
 * server.close() resolves as soon as the sockets are gone: without this, close() could resolve, and
 * main.ts close the database, under a handler still using it (seen as "driver has already been
 * destroyed" at shutdown). A request counts from onRequest until its answer is sent (onSend) or
 * finished (onResponse), whichever comes first; the process's own stop timer bounds the wait.
 */
export function waitForRunningHandlersOnClose(app: FastifyInstance): void {
  const running = new Set<FastifyRequest>()
  let wake: (() => void) | undefined
  const finish = (request: FastifyRequest) => {
    if (running.delete(request) && running.size === 0) wake?.()
  }
  app.addHook('onRequest', async (request) => {
    running.add(request)
  })
  app.addHook('onSend', async (request, _reply, payload) => {
    finish(request)
    return payload
  })
  app.addHook('onResponse', async (request) => finish(request))
  app.addHook('onClose', async () => {
    if (running.size > 0) await new Promise<void>((resolve) => (wake = resolve))
  })
}
