import { STATUS_CODES } from 'node:http'
import type { Readable } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { InvalidRequestError, isDatabaseDown, LinksApiError, ServiceUnavailableError } from '../errors.js'
import { ownerOf, WRITE } from '../links/link.routes.js'
import { AppLimitReachedError, writingAppOf } from '../../../shared/app-leash.js'
import { parseInput } from '../web/parse.js'
import { ImportInputError } from './import-reader.js'
import type { DryRunReport, ImportJob, ImportProblem, ImportService } from './import.service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The background runner of import jobs (started when the app is ready, stopped on close). */
    importRunner: ImportService['runner']
  }
}

/** The media types an upload may have, and the reader each gets. */
const UPLOAD_TYPES: Record<string, 'csv' | 'jsonl'> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
}

const UNSUPPORTED =
  'Send the file as text/csv (a Bitly export or the generic CSV) or application/x-ndjson (JSON Lines).'

const booleanFlag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1')

export const importQuerySchemas = {
  upload: z.strictObject({ dry_run: booleanFlag.default(false) }),
  report: z.strictObject({
    after: z
      .string()
      .regex(/^\d{1,9}$/, 'must be a line number (next_after of the previous page)')
      .transform(Number)
      .default(0),
  }),
}

export function importJson(job: ImportJob) {
  return {
    id: job.id,
    state: job.state,
    format: job.format,
    lines_read: job.linesRead,
    valid_rows: job.rowsStaged,
    created: job.created,
    skipped: job.skipped,
    conflicts: job.conflicts,
    invalid: job.invalid,
    error: job.error,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    finished_at: job.finishedAt?.toISOString() ?? null,
  }
}

const problemJson = (p: ImportProblem) => ({ line: p.line, kind: p.kind, field: p.field, reason: p.reason })

function dryRunJson(report: DryRunReport) {
  return {
    dry_run: true,
    format: report.format,
    lines_read: report.linesRead,
    would_create: report.wouldCreate,
    skipped: report.skipped,
    conflicts: report.conflicts,
    invalid: report.invalid,
    problems: report.problems.map(problemJson),
    problems_truncated: report.problemsTruncated,
  }
}

/**
 * The import routes answer errors as RFC 9457 problems (`application/problem+json`) naming the
 * field and the line, and carry `error` and `error_description` as the rest of the links API does.
 */
function sendProblem(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const fastifyError = error as Partial<FastifyError>
  const known =
    error instanceof LinksApiError
      ? error
      : isDatabaseDown(error)
        ? new ServiceUnavailableError()
        : fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? new InvalidRequestError('Send no body, or a JSON one.', 415)
          : typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500
            ? new InvalidRequestError(
                fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
                  ? 'The request body is too large.'
                  : 'The request is malformed.',
                fastifyError.statusCode,
              )
            : undefined
  if (!known || known.status >= 500) request.log.error({ err: error }, 'request failed')
  if (known?.status === 503) reply.header('retry-after', '5')
  if (known instanceof AppLimitReachedError) reply.header('retry-after', String(known.retryAfterSeconds))
  // An upload refused before its end: the rest is dropped and the connection not reused.
  if (!request.raw.complete) reply.header('connection', 'close')
  const status = known?.status ?? 500
  const details = error instanceof ImportInputError ? error.details : {}
  const field = details.field ?? (known?.description.match(/^([a-z_]+): /)?.[1] || undefined)
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Error',
      status,
      detail: known?.description ?? 'An unexpected error occurred.',
      ...(field ? { field } : {}),
      ...(details.line !== undefined ? { line: details.line } : {}),
      ...(known instanceof AppLimitReachedError ? known.details : {}),
      error: known?.code ?? 'server_error',
      error_description: known?.description ?? 'An unexpected error occurred.',
    })
}

/** The upload's reader, from its Content-Type; 415 for any other body. */
const mediaTypeOf = (request: FastifyRequest) =>
  String(request.headers['content-type'] ?? '')
    .split(';', 1)[0]!
    .trim()
    .toLowerCase()

function uploadOf(request: FastifyRequest): { source: Readable; kind: 'csv' | 'jsonl' } {
  const kind = UPLOAD_TYPES[mediaTypeOf(request)]
  const body = request.body as Readable | undefined
  if (!kind || !body || typeof body.pipe !== 'function') throw new InvalidRequestError(UNSUPPORTED, 415)
  return { source: body, kind }
}

/**
 * `/api/imports`: import links from another shortener (scope links:write). POST a file: with
 * `?dry_run=true` the report of what would happen, else a job (202) processed in the background,
 * whose progress and report are read at `/api/imports/{id}`.
 */
export function importRoutes(imports: ImportService) {
  return async (app: FastifyInstance) => {
    app.setErrorHandler(sendProblem)
    app.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
    })
    // Uploads are read as a stream by the import itself, which bounds their size and lines.
    app.addContentTypeParser(Object.keys(UPLOAD_TYPES), (_request, payload, done) => done(null, payload))
    // No other import route reads a body: a small JSON one (empty included, as some clients send
    // with POST …/resume) is read and ignored.
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_r, _body, done) => done(null, undefined),
    )

    app.post(
      '/api/imports',
      {
        config: WRITE,
        // Any other body (JSON included) is refused before a byte of it is read.
        preParsing: async (request, _reply, payload) => {
          if (!UPLOAD_TYPES[mediaTypeOf(request)]) throw new InvalidRequestError(UNSUPPORTED, 415)
          return payload
        },
      },
      async (request, reply) => {
        const query = parseInput(importQuerySchemas.upload, request.query)
        const { source, kind } = uploadOf(request)
        const owner = ownerOf(request)
        if (query.dry_run) return dryRunJson(await imports.dryRun(owner, source, kind))
        const job = await imports.startImport(owner, source, kind, writingAppOf(request.auth!))
        return reply.code(202).header('location', `/api/imports/${job.id}`).send(importJson(job))
      },
    )

    app.get('/api/imports', { config: WRITE }, async (request) => ({
      imports: (await imports.listImports(ownerOf(request))).map(importJson),
    }))

    app.get('/api/imports/:id', { config: WRITE }, async (request) =>
      importJson(await imports.getImport(ownerOf(request), (request.params as { id: string }).id)),
    )

    app.get('/api/imports/:id/report', { config: WRITE }, async (request) => {
      const { after } = parseInput(importQuerySchemas.report, request.query)
      const report = await imports.importReport(
        ownerOf(request),
        (request.params as { id: string }).id,
        after,
      )
      return {
        import: importJson(report.job),
        problems: report.problems.map(problemJson),
        next_after: report.nextAfter ?? null,
      }
    })

    app.post('/api/imports/:id/resume', { config: WRITE }, async (request, reply) => {
      const job = await imports.resumeImport(ownerOf(request), (request.params as { id: string }).id)
      return reply.code(202).send(importJson(job))
    })
  }
}
