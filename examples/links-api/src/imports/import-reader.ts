import { isUtf8 } from 'node:buffer'
import { type Readable, Transform } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { setImmediate as breathe } from 'node:timers/promises'
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

const CR = 0x0d
const LF = 0x0a
/** Longest line (in bytes) whose UTF-8 is checked; a longer one is refused for its length anyway. */
const MAX_CHECKED_LINE_BYTES = MAX_LINE_LENGTH * 4 + 4

/**
 * What the input guard learnt of the upload's lines: those that are not valid UTF-8 (each becomes a
 * row error naming its line, never a silent U+FFFD).
 */
interface LineFacts {
  notUtf8: Set<number>
}

/**
 * Passes the body through as it arrives, refusing it (413) once it is larger than `maxBytes` or has
 * more than `maxLines` lines. Every line counts, blank ones too, ended by `\r\n`, `\n` or `\r`
 * (the readers end lines the same way, so line numbers agree). Notes each line that is not UTF-8.
 */
function inputGuard(maxBytes: number, maxLines: number, tooManyLines: (line: number) => Error) {
  const facts: LineFacts = { notUtf8: new Set() }
  let seen = 0
  let lines = 0
  let atLineStart = true
  let afterCr = false
  let current: Buffer[] = []
  let currentLength = 0
  const endLine = () => {
    const bytes = current.length === 1 ? current[0]! : Buffer.concat(current)
    if (currentLength <= MAX_CHECKED_LINE_BYTES && !isUtf8(bytes)) facts.notUtf8.add(lines)
    current = []
    currentLength = 0
  }
  const keep = (part: Buffer) => {
    if (currentLength > MAX_CHECKED_LINE_BYTES) return
    current.push(part)
    currentLength += part.length
  }
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      if (seen > maxBytes)
        return done(new ImportInputError(`the file is larger than ${maxBytes} bytes; split it`, {}, 413))
      let from = 0
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]!
        if (byte === LF && afterCr) {
          afterCr = false
          from = i + 1
          continue
        }
        afterCr = false
        if (atLineStart) {
          atLineStart = false
          if (++lines > maxLines) return done(tooManyLines(lines))
        }
        if (byte === CR || byte === LF) {
          keep(chunk.subarray(from, i))
          endLine()
          atLineStart = true
          afterCr = byte === CR
          from = i + 1
        }
      }
      if (from < chunk.length) keep(chunk.subarray(from))
      done(null, chunk)
    },
    flush(done) {
      if (!atLineStart) endLine()
      done()
    },
  })
  return { stream, facts }
}

/**
 * Lets other requests run (a macrotask turn) once the reader has worked `SLICE_MS` without one:
 * parsing a large upload never holds the event loop longer than that, however the lines come.
 */
const SLICE_MS = 10
function pacer(): () => Promise<void> | undefined {
  let since = performance.now()
  return () => {
    if (performance.now() - since < SLICE_MS) return undefined
    return breathe().then(() => {
      since = performance.now()
    })
  }
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
  return new ImportInputError(`more than ${limits.maxRows} data lines; split the file`, { line }, 413)
}

const NOT_UTF8: RowProblem = { field: 'line', reason: 'is not valid UTF-8' }

async function* readCsv(source: Readable, ownOrigin: string, limits: ImportLimits): AsyncGenerator<ReadItem> {
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_LINE_LENGTH,
    info: true,
    // Every line ending, even mixed in one file (csv-parse would otherwise keep the first it meets).
    record_delimiter: ['\r\n', '\n', '\r'],
  })
  // The header is line 1: the data lines are the rest.
  const guard = inputGuard(limits.maxBytes, limits.maxRows + 1, (line) => tooManyRows(limits, line))
  const limited = connect(source, guard.stream)
  limited.on('error', (err) => parser.destroy(err))
  limited.pipe(parser)
  const pace = pacer()
  let header: string[] | undefined
  let format: 'bitly' | 'csv' = 'csv'
  /** The last line of the previous record: a record spans the lines after it up to its own. */
  let previousEnd = 0
  const notUtf8 = (end: number) => {
    for (let l = previousEnd + 1; l <= end; l++) if (guard.facts.notUtf8.has(l)) return true
    return false
  }
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[]
      info: { lines: number }
    }>) {
      await pace()
      const line = info.lines
      const badText = notUtf8(line)
      previousEnd = line
      if (!header) {
        if (badText)
          throw new ImportInputError('the header row is not valid UTF-8', { line, field: 'header' })
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
      if (badText) {
        yield { kind: 'invalid', line, problem: NOT_UTF8 }
        continue
      }
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
  const guard = inputGuard(limits.maxBytes, limits.maxRows, (line) => tooManyRows(limits, line))
  const limited = connect(source, guard.stream)
  yield { kind: 'format', format: 'jsonl' }
  const pace = pacer()
  const decoder = new StringDecoder('utf8')
  let pending = ''
  let line = 0
  function lineItem(text: string): ReadItem | undefined {
    line++
    if (guard.facts.notUtf8.has(line)) return { kind: 'invalid', line, problem: NOT_UTF8 }
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim()
    if (trimmed === '') return undefined
    let value: unknown
    try {
      value = JSON.parse(trimmed)
    } catch {
      return { kind: 'invalid', line, problem: { field: 'line', reason: 'is not valid JSON' } }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { kind: 'invalid', line, problem: { field: 'line', reason: 'must be a JSON object' } }
    const row = rowFrom('jsonl', value as Record<string, unknown>, ownOrigin)
    return isProblem(row) ? { kind: 'invalid', line, problem: row } : { kind: 'row', line, row }
  }
  const tooLong = () => new ImportInputError(`longer than ${MAX_LINE_LENGTH} characters`, { line: line + 1 })
  try {
    for await (const chunk of limited as AsyncIterable<Buffer>) {
      pending += decoder.write(chunk)
      // Lines end with \r\n, \n or \r; a \r at the end of what has arrived waits for the next byte.
      let from = 0
      const nextLineEnd = lineEnds(pending)
      for (;;) {
        const end = nextLineEnd(from)
        if (end < 0 || (pending[end] === '\r' && end === pending.length - 1)) break
        if (end - from > MAX_LINE_LENGTH) throw tooLong()
        const item = lineItem(pending.slice(from, end))
        if (item) yield item
        from = end + (pending[end] === '\r' && pending[end + 1] === '\n' ? 2 : 1)
        await pace()
      }
      pending = pending.slice(from)
      if (pending.length > MAX_LINE_LENGTH + 1) throw tooLong()
    }
    pending += decoder.end()
    let from = 0
    const nextLineEnd = lineEnds(pending)
    for (let end = nextLineEnd(from); end >= 0; end = nextLineEnd(from)) {
      const item = lineItem(pending.slice(from, end))
      if (item) yield item
      from = end + (pending[end] === '\r' && pending[end + 1] === '\n' ? 2 : 1)
    }
    if (from < pending.length) {
      const item = lineItem(pending.slice(from))
      if (item) yield item
    }
  } finally {
    release(source)
  }
}

/**
 * The line ends of `text`: a function giving the index of the next \n or \r from `from` (or -1),
 * remembering where each was found so that a text of many lines is scanned once, not once a line.
 */
function lineEnds(text: string): (from: number) => number {
  let lf = -2
  let cr = -2
  return (from) => {
    if (lf !== -1 && lf < from) lf = text.indexOf('\n', from)
    if (cr !== -1 && cr < from) cr = text.indexOf('\r', from)
    return lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr)
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
