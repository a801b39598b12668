import type { FastifyInstance } from 'fastify'
import { setNoStore } from '../web/no-store.js'
import type { DpopService } from './dpop.service.js'

/**
 * The headers of every answer of an endpoint a client POSTs to with DPoP (token, PAR), errors
 * included (the error handler keeps headers set here): uncacheable (RFC 6749 §5.1, RFC 9126 §2.2),
 * and with nonces required the current one (RFC 9449 §8), use_dpop_nonce first.
 */
export function noStoreWithDpopNonce(app: FastifyInstance, dpop: Pick<DpopService, 'nonce'>): void {
  app.addHook('onRequest', async (_request, reply) => {
    setNoStore(reply)
    const nonce = dpop.nonce()
    if (nonce !== undefined) reply.header('dpop-nonce', nonce)
  })
}
