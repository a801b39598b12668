import fc from 'fast-check'

/**
 * Generators of hostile HTTP input for the property-based tests: values, encodings, bodies and
 * headers that a browser, a client library or an attacker may send.
 */

/** Values that break naive parsers: encodings, sizes, numbers, markup, separators, control bytes. */
export const nastyValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '%',
    '%ZZ',
    '%C3%28', // invalid UTF-8 once decoded
    '%FF%FE',
    '%00',
    '\u0000',
    '\uFFFD',
    '\uD800', // a lone surrogate
    'é',
    '日本',
    '1e309',
    '-0',
    'NaN',
    '99999999999999999999999999999999',
    '__proto__',
    'constructor',
    'toString',
    'null',
    'true',
    '[]',
    '{}',
    '<script>alert(1)</script>',
    '"><img src=x onerror=alert(1)>',
    'javascript:alert(1)',
    'https://evil.example/cb',
    '//evil.example',
    '/\\evil.example',
    'a b',
    'a+b',
    'a&b=c',
    'x'.repeat(3000),
    'a'.repeat(70_000),
    'S256',
    'plain',
    'none',
    'login consent',
  ),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.stringMatching(/^[A-Za-z0-9_-]{8,64}$/),
  fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/),
)

/** A value for a parameter: mostly plausible ones (so requests get deep), often hostile ones. */
export function valueFor(plausible: readonly string[]): fc.Arbitrary<string> {
  return plausible.length === 0
    ? nastyValue
    : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...plausible) }, { weight: 2, arbitrary: nastyValue })
}

/** How one value is written into a query string or form body. */
export type Encoding = 'proper' | 'raw' | 'broken'

/** Percent-encodes the UTF-8 bytes of a value (a lone surrogate becomes U+FFFD, as a browser sends it). */
function encodeBytes(value: string, keep: RegExp): string {
  let out = ''
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += keep.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

function percentEncode(value: string, encoding: Encoding): string {
  if (encoding === 'proper') return encodeBytes(value, /[A-Za-z0-9._~-]/)
  // As typed, as far as a request line can carry it (no space, #, non-ASCII or control bytes).
  if (encoding === 'raw') return encodeBytes(value, /[\x21-\x7e]/).replace(/#/g, '%23')
  return `${encodeBytes(value, /[A-Za-z0-9._~-]/)}${['%', '%Z', '%E0%A4%A', '%C3%28', '%FF'][value.length % 5]}`
}

export type Pair = readonly [name: string, value: string, encoding: Encoding]

/** name=value pairs, repeated names included, as a query string or form body. */
export function formEncode(pairs: readonly Pair[]): string {
  return pairs
    .map(([n, v, e]) => `${percentEncode(n, e === 'broken' ? 'proper' : e)}=${percentEncode(v, e)}`)
    .join('&')
}

/** Parameters for names (known ones and stray ones), in any order, some repeated. */
export function pairsFor(known: Record<string, readonly string[]>): fc.Arbitrary<Pair[]> {
  const names = Object.keys(known)
  const pair = fc
    .oneof(
      { weight: 6, arbitrary: names.length ? fc.constantFrom(...names) : fc.constant('x') },
      {
        weight: 1,
        arbitrary: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('a[]', 'a[b]', '__proto__')),
      },
    )
    .chain((name) =>
      fc.tuple(
        fc.constant(name),
        valueFor(Object.hasOwn(known, name) ? known[name]! : []),
        fc.constantFrom<Encoding>('proper', 'proper', 'proper', 'raw', 'broken'),
      ),
    )
  return fc.array(pair, { maxLength: 10 })
}

/** A JSON body from pairs: strings as sent, or swapped for arrays, objects, numbers or null. */
export function jsonBody(pairs: readonly Pair[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.oneof(
        { weight: 6, arbitrary: fc.constant('as-is') },
        { weight: 1, arbitrary: fc.constantFrom('array', 'object', 'number', 'huge', 'null', 'bool') },
      ),
      { minLength: pairs.length, maxLength: pairs.length },
    )
    .chain((shapes) =>
      fc.constantFrom(
        `{${pairs
          .map(([n, v], i) => {
            const value = {
              'as-is': JSON.stringify(v),
              array: JSON.stringify([v, v]),
              object: JSON.stringify({ value: v }),
              number: '12345',
              huge: '1e999',
              null: 'null',
              bool: 'true',
            }[shapes[i]!]
            return `${JSON.stringify(n)}:${value}`
          })
          .join(',')}}`,
        '[]',
        '"a string"',
        '{',
        '{"a":1,"a":2}',
        'null',
      ),
    )
}

export const contentTypes = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/json',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/x-www-form-urlencoded, application/json',
  ';;;',
)

/**
 * What Node's HTTP parser makes of repeated header lines (app.inject takes the headers as given):
 * a repeated Content-Type, Authorization, Host and the like keeps the first, Cookie lines are joined
 * with "; ", and other headers with ", " (node's IncomingMessage._addHeaderLine).
 */
export function asNodeHeaders(lines: readonly (readonly [string, string])[]): Record<string, string> {
  const firstWins = new Set([
    'content-type',
    'content-length',
    'user-agent',
    'referer',
    'host',
    'authorization',
    'proxy-authorization',
    'if-modified-since',
    'if-unmodified-since',
    'from',
    'location',
    'max-forwards',
    'retry-after',
    'etag',
    'last-modified',
    'server',
    'age',
    'expires',
  ])
  const headers: Record<string, string> = {}
  for (const [rawName, value] of lines) {
    const name = rawName.toLowerCase()
    if (!(name in headers)) headers[name] = value
    else if (name === 'cookie') headers[name] += `; ${value}`
    else if (!firstWins.has(name)) headers[name] += `, ${value}`
  }
  return headers
}

type Mutation =
  | { kind: 'drop'; name: string }
  | { kind: 'replace' | 'repeat'; name: string; value: string }
  | { kind: 'stray'; name: string; value: string }
  | { kind: 'encode'; name: string; encoding: Encoding }

/**
 * A valid set of parameters with a few things wrong with it: dropped, replaced by a plausible or a
 * hostile value, repeated, a stray parameter added, or written with another encoding. Requests then
 * get past the first checks and reach the deeper ones.
 */
export function mutatedPairs(
  valid: Record<string, string>,
  known: Record<string, readonly string[]>,
): fc.Arbitrary<Pair[]> {
  const names = Object.keys(valid)
  if (names.length === 0) return pairsFor(known)
  const name = fc.constantFrom(...names)
  const withValue = (kind: 'replace' | 'repeat') =>
    name.chain((n) =>
      valueFor(Object.hasOwn(known, n) ? known[n]! : []).map((value): Mutation => ({ kind, name: n, value })),
    )
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    name.map((n): Mutation => ({ kind: 'drop', name: n })),
    withValue('replace'),
    withValue('replace'),
    withValue('repeat'),
    fc
      .tuple(fc.string({ maxLength: 10 }), nastyValue)
      .map(([n, value]): Mutation => ({ kind: 'stray', name: n, value })),
    fc
      .tuple(name, fc.constantFrom<Encoding>('raw', 'broken'))
      .map(([n, encoding]): Mutation => ({ kind: 'encode', name: n, encoding })),
  )
  return fc.array(mutation, { maxLength: 3 }).map((mutations) => {
    let pairs: Pair[] = names.map((n) => [n, valid[n]!, 'proper'] as const)
    for (const m of mutations) {
      if (m.kind === 'drop') pairs = pairs.filter(([n]) => n !== m.name)
      else if (m.kind === 'replace') pairs = pairs.map((p) => (p[0] === m.name ? [p[0], m.value, p[2]] : p))
      else if (m.kind === 'repeat' || m.kind === 'stray') pairs = [...pairs, [m.name, m.value, 'proper']]
      else if (m.kind === 'encode') pairs = pairs.map((p) => (p[0] === m.name ? [p[0], p[1], m.encoding] : p))
    }
    return pairs
  })
}
