import { parse } from 'node:querystring'
import type { FastifyRequest } from 'fastify'
import { invalidRequest } from '../errors.js'

/** More parameters than any endpoint reads (the most, GET /oauth/authorize, has 8). */
export const MAX_PARAMETERS = 50
/**
 * Longer than any parameter we read (redirect_uri: 2000 characters; codes, tokens, verifiers and
 * client ids far less), in a query, a form or a JSON body alike.
 */
export const MAX_PARAMETER_LENGTH = 4096

/** Set on a parsed query or body that broke a limit; the preValidation hook answers 400 for it. */
const TOO_LARGE = Symbol('parameters over the limits')

type Parameters = Record<string, string | string[]> & { [TOO_LARGE]?: string }

function overLimit(reason: string): Parameters {
  const marked: Parameters = Object.create(null)
  marked[TOO_LARGE] = reason
  return marked
}

/**
 * Parses a query string or an application/x-www-form-urlencoded body (the parser of both), counting
 * before parsing so a request cannot make us build an object of thousands of members. It never
 * throws (a throw inside Fastify's router or body reader is no clean answer): a request over the
 * limits parses to an empty object marked for `assertParameterLimits`.
 */
export function parseParameters(text: string): Parameters {
  if (text.length === 0) return Object.create(null)
  let count = 1
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    if (++count > MAX_PARAMETERS) return overLimit(`The request has more than ${MAX_PARAMETERS} parameters.`)
  }
  const parsed = parse(text, '&', '=', { maxKeys: 0 }) as Parameters
  for (const value of Object.values(parsed)) {
    for (const one of [value].flat()) {
      if (one.length > MAX_PARAMETER_LENGTH)
        return overLimit(`A parameter is longer than ${MAX_PARAMETER_LENGTH} characters.`)
    }
  }
  return parsed
}

/** preValidation: a query or body over the limits is 400 invalid_request; a JSON body counts its members. */
export async function assertParameterLimits(request: FastifyRequest): Promise<void> {
  for (const part of [request.query, request.body]) {
    if (typeof part !== 'object' || part === null) continue
    const reason = (part as Parameters)[TOO_LARGE]
    if (reason) throw invalidRequest(reason)
    if (!Array.isArray(part) && Object.keys(part).length > MAX_PARAMETERS)
      throw invalidRequest(`The request has more than ${MAX_PARAMETERS} parameters.`)
  }
}
