import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'

/**
 * The client's address as the limits count it: request.ip, which follows X-Forwarded-For only with
 * TRUST_PROXY; an IPv6 address counts by its /64, the block one subscriber gets.
 */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip, 64)
}
