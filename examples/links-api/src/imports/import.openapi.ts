import { z } from 'zod'
import { bearer, idParameter, isoTime, noToken, ok, problem, wrongScope } from '../web/openapi.js'
import { GENERIC_FIELDS } from './import-row.js'

/** The import routes (import.routes.ts) in the OpenAPI document: RFC 9457 problems, scope links:write. */

const format = z.enum(['bitly', 'csv', 'jsonl'])

const importSchema = z.object({
  id: z.string(),
  state: z.enum(['receiving', 'queued', 'running', 'done', 'failed', 'incomplete']).meta({
    description:
      'receiving (the file arrives) → queued → running → done; failed: a batch could not be written (resume it); incomplete: the upload was cut off (upload again).',
  }),
  format,
  lines_read: z.number().int().meta({ description: 'Data lines read from the file.' }),
  valid_rows: z.number().int(),
  created: z.number().int(),
  skipped: z.number().int().meta({
    description:
      'Rows already imported (by an earlier run of the same file) or repeated in it, and archived Bitlinks (each with a report line).',
  }),
  conflicts: z.number().int(),
  invalid: z.number().int(),
  error: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
  finished_at: isoTime.nullable(),
})

const importProblemSchema = z.object({
  line: z.number().int(),
  kind: z.enum(['invalid', 'conflict', 'skipped']),
  field: z.string().nullable(),
  reason: z.string(),
})

const dryRunSchema = z.object({
  dry_run: z.literal(true),
  format,
  lines_read: z.number().int(),
  would_create: z.number().int(),
  skipped: z.number().int(),
  conflicts: z.number().int(),
  invalid: z.number().int(),
  problems: z.array(importProblemSchema).meta({ description: 'The first 1000 problem lines.' }),
  problems_truncated: z.boolean(),
})

const uploadBody = {
  required: true,
  description:
    'The file, streamed. CSV: a Bitly export (its header names long_url) or the generic CSV (header of ' +
    `${GENERIC_FIELDS.join(', ')}; url required). JSON Lines: one object per line with the same fields.`,
  content: {
    'text/csv': { schema: { type: 'string' } },
    'application/x-ndjson': { schema: { type: 'string' } },
    'application/jsonl': { schema: { type: 'string' } },
  },
}

const importAuth = {
  '401': noToken,
  '403': wrongScope('links:write'),
}
const notFound = problem('No such import of this user.')

export function importOpenApiPaths() {
  return {
    '/api/imports': {
      post: {
        operationId: 'importLinks',
        summary: 'Import links from another shortener (a dry run with dry_run=true).',
        description:
          'With dry_run=true: the report of what would be created, what conflicts and what is invalid, writing nothing. ' +
          'Otherwise: a job, processed in batches in the background; poll GET /api/imports/{id}.',
        ...bearer('links:write'),
        parameters: [
          {
            name: 'dry_run',
            in: 'query',
            required: false,
            schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
          },
        ],
        requestBody: uploadBody,
        responses: {
          '200': ok('The dry run’s report.', dryRunSchema),
          '202': ok('The job (Location names it), queued.', importSchema),
          '400': problem(
            'A bad header, a line too long, broken CSV, a bad query parameter: field and line named.',
          ),
          ...importAuth,
          '413': problem(
            'The file is larger than LINKS_IMPORT_MAX_BYTES or has more rows than LINKS_IMPORT_MAX_ROWS.',
          ),
          '415': problem('The body is not text/csv or JSON Lines.'),
          '429': problem(
            'app_limit_reached: each valid row of an import counts as a new link against what this application may still create for this person this hour (by `client_standing`, as POST /api/links): the file has more valid rows than `remaining`, and no job was made. Rows that turn out to be duplicates are given back as the job runs. `retry_after` (also the Retry-After header) and `retry_at` say when the count starts again; a file larger than `limit` must be split. Verified apps are not limited.',
          ),
          '503': problem('The database is unreachable.'),
        },
      },
      get: {
        operationId: 'listImports',
        summary: "The user's 50 latest imports.",
        ...bearer('links:write'),
        responses: {
          '200': ok('The imports, newest first.', z.object({ imports: z.array(importSchema) })),
          ...importAuth,
        },
      },
    },
    '/api/imports/{id}': {
      get: {
        operationId: 'getImport',
        summary: 'An import’s progress: its state and counters.',
        ...bearer('links:write'),
        parameters: [idParameter('The import id.')],
        responses: {
          '200': ok('The import.', importSchema),
          ...importAuth,
          '404': notFound,
        },
      },
    },
    '/api/imports/{id}/report': {
      get: {
        operationId: 'importReport',
        summary: 'An import’s report: its invalid, conflicting and skipped archived lines, 1000 at a time.',
        ...bearer('links:write'),
        parameters: [
          idParameter('The import id.'),
          {
            name: 'after',
            in: 'query',
            required: false,
            schema: { type: 'string' },
            description: 'next_after of the previous page.',
          },
        ],
        responses: {
          '200': ok(
            'The import and a page of its problem lines.',
            z.object({
              import: importSchema,
              problems: z.array(importProblemSchema),
              next_after: z.number().int().nullable(),
            }),
          ),
          '400': problem('A bad query parameter.'),
          ...importAuth,
          '404': notFound,
        },
      },
    },
    '/api/imports/{id}/resume': {
      post: {
        operationId: 'resumeImport',
        summary:
          'Resume an import that failed or whose instance stopped: it continues after its last committed batch.',
        ...bearer('links:write'),
        parameters: [idParameter('The import id.')],
        responses: {
          '202': ok('The import, queued again.', importSchema),
          ...importAuth,
          '404': notFound,
          '409': problem('The import is finished, still receiving its file, or its upload was cut off.'),
        },
      },
    },
  }
}
