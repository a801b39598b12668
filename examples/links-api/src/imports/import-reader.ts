import { type Readable, Transform } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { CsvError, parse } from 'csv-parse'
import { InvalidRequestError } from '../errors.js'
import {
  csvFormatOf,
  genericHeaderProblem,
  headerName,
  type ImportFormat,
  type ImportRow,
  isProblem,
  rowFrom,
  type RowProblem,
} from './import-row.js'

/** The bounds of one upload (config: LINKS_IMPORT_MAX_BYTES, LINKS_IMPORT_MAX_ROWS). */
export interface ImportLimits {
  maxBytes: number
  maxRows: number
}

/** A CSV record or a JSON line longer than this is refused: no row needs more. */
export const MAX_LINE_LENGTH = 8192

/**
 * A problem with the upload as a whole (not one row): answered as a 400 (413 for size) problem
 * naming the line and, when there is one, the field. Nothing of the upload is imported.
 */
export class ImportInputError extends InvalidRequestError {
  override name = 'ImportInputError'
  constructor(
    description: string,
    readonly details: { line?: number; field?: string } = {},
    status = 400,
  ) {
    super(details.line === undefined ? description : `line ${details.line}: ${description}`, status)
  }
}

/** What reading an upload yields: first its format, then each data line as a row or a problem. */
export type ReadItem =
  | { kind: 'format'; format: ImportFormat }
  | { kind: 'row'; line: number; row: ImportRow }
  | { kind: 'invalid'; line: number; problem: RowProblem }

/** Passes the body through, refusing it (413) once it is larger than `maxBytes`. */
function byteLimit(maxBytes: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      if (seen > maxBytes)
        done(new ImportInputError(`the file is larger than ${maxBytes} bytes; split it`, {}, 413))
      else done(null, chunk)
    },
  })
}

/** Pipes the body into `next`, passing an error of the body on (pipe() alone would not). */
function connect(source: Readable, next: Transform): Transform {
  source.on('error', (err) => next.destroy(err))
  return source.pipe(next)
}

/**
 * Done with the body before its end (a refusal): it is drained and dropped rather than destroyed,
 * so the client still reads the answer (sent with `Connection: close`).
 */
function release(source: Readable): void {
  source.unpipe()
  if (!source.readableEnded) source.resume()
}

function tooManyRows(limits: ImportLimits, line: number): ImportInputError {
  return new ImportInputError(`more than ${limits.maxRows} rows; split the file`, { line }, 413)
}

async function* readCsv(source: Readable, ownOrigin: string, limits: ImportLimits): AsyncGenerator<ReadItem> {
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_LINE_LENGTH,
    info: true,
  })
  const limited = connect(source, byteLimit(limits.maxBytes))
  limited.on('error', (err) => parser.destroy(err))
  limited.pipe(parser)
  let header: string[] | undefined
  let format: 'bitly' | 'csv' = 'csv'
  let rows = 0
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[]
      info: { lines: number }
    }>) {
      const line = info.lines
      if (!header) {
        const detected = csvFormatOf(record)
        if (!detected)
          throw new ImportInputError(
            'the header row names no "url" column (generic format) nor "long_url" (a Bitly export)',
            { line, field: 'header' },
          )
        if (detected === 'csv') {
          const problem = genericHeaderProblem(record)
          if (problem) throw new ImportInputError(problem, { line, field: 'header' })
        }
        header = record.map(headerName)
        format = detected
        yield { kind: 'format', format }
        continue
      }
      if (++rows > limits.maxRows) throw tooManyRows(limits, line)
      if (record.length !== header.length) {
        yield {
          kind: 'invalid',
          line,
          problem: { field: 'line', reason: `has ${record.length} fields; the header has ${header.length}` },
        }
        continue
      }
      const cells: Record<string, string> = {}
      header.forEach((name, i) => {
        cells[name] = record[i]!.trim()
      })
      const row = rowFrom(format, cells, ownOrigin)
      yield isProblem(row) ? { kind: 'invalid', line, problem: row } : { kind: 'row', line, row }
    }
  } catch (err) {
    throw csvError(err)
  } finally {
    parser.destroy()
    release(source)
  }
  if (!header) throw new ImportInputError('the file is empty; the first line must be the header row', {})
}

function csvError(err: unknown): unknown {
  if (!(err instanceof CsvError)) return err
  const line = (err as unknown as { lines?: number }).lines
  const details = line === undefined ? {} : { line }
  if (err.code === 'CSV_MAX_RECORD_SIZE')
    return new ImportInputError(`a record longer than ${MAX_LINE_LENGTH} characters`, details)
  if (err.code === 'CSV_QUOTE_NOT_CLOSED')
    return new ImportInputError('a quoted field is never closed', details)
  return new ImportInputError(`not valid CSV (${err.code.toLowerCase()})`, details)
}

async function* readJsonLines(
  source: Readable,
  ownOrigin: string,
  limits: ImportLimits,
): AsyncGenerator<ReadItem> {
  const limited = connect(source, byteLimit(limits.maxBytes))
  yield { kind: 'format', format: 'jsonl' }
  const decoder = new StringDecoder('utf8')
  let pending = ''
  let line = 0
  let rows = 0
  function* lineItem(text: string): Generator<ReadItem> {
    line++
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).replace(/\r$/, '').trim()
    if (trimmed === '') return
    if (++rows > limits.maxRows) throw tooManyRows(limits, line)
    let value: unknown
    try {
      value = JSON.parse(trimmed)
    } catch {
      yield { kind: 'invalid', line, problem: { field: 'line', reason: 'is not valid JSON' } }
      return
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      yield { kind: 'invalid', line, problem: { field: 'line', reason: 'must be a JSON object' } }
      return
    }
    const row = rowFrom('jsonl', value as Record<string, unknown>, ownOrigin)
    yield isProblem(row) ? { kind: 'invalid', line, problem: row } : { kind: 'row', line, row }
  }
  try {
    for await (const chunk of limited as AsyncIterable<Buffer>) {
      pending += decoder.write(chunk)
      let newline: number
      while ((newline = pending.indexOf('\n')) >= 0) {
        const text = pending.slice(0, newline)
        pending = pending.slice(newline + 1)
        if (text.length > MAX_LINE_LENGTH)
          throw new ImportInputError(`longer than ${MAX_LINE_LENGTH} characters`, { line: line + 1 })
        yield* lineItem(text)
      }
      if (pending.length > MAX_LINE_LENGTH)
        throw new ImportInputError(`longer than ${MAX_LINE_LENGTH} characters`, { line: line + 1 })
    }
    pending += decoder.end()
    if (pending !== '') yield* lineItem(pending)
  } finally {
    release(source)
  }
}

/**
 * Reads an upload as it arrives, never holding more than a record: `text/csv` (Bitly's export or
 * the generic CSV, told apart by the header) or JSON Lines. Throws ImportInputError for what
 * spoils the whole upload (size, row count, a line too long, broken CSV quoting, a bad header).
 */
export function readImport(
  source: Readable,
  kind: 'csv' | 'jsonl',
  ownOrigin: string,
  limits: ImportLimits,
): AsyncGenerator<ReadItem> {
  return kind === 'csv' ? readCsv(source, ownOrigin, limits) : readJsonLines(source, ownOrigin, limits)
}
