import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

/* ajv-formats is CommonJS; its module object carries the plugin as `default` too. */
const addFormats = addFormatsModule.default

export type OpenApiDocument = {
  paths: Record<string, Record<string, { responses: Record<string, OpenApiResponse> }>>
}
type OpenApiResponse = {
  description: string
  content?: Record<string, { schema?: object }>
}

/** A JSON Schema 2020-12 validator, as OpenAPI 3.1 uses. */
export function createValidator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  addFormats(ajv)
  return ajv
}

/**
 * Checks a real answer against the document: the operation exists, the status is documented, the
 * media type is one of those documented for it, and the body matches that schema. Returns the
 * problems found (empty when it matches).
 */
export function checkResponse(
  doc: OpenApiDocument,
  ajv: ReturnType<typeof createValidator>,
  operation: string,
  res: LightMyRequestResponse,
): string[] {
  const [method, path] = operation.split(' ') as [string, string]
  const op = doc.paths[path]?.[method.toLowerCase()]
  if (!op) return [`${operation} is not in the document`]
  const documented = op.responses[String(res.statusCode)]
  if (!documented) return [`${operation} answered ${res.statusCode}, which is not documented: ${res.body}`]
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';', 1)[0]!
    .trim()
  if (!documented.content) {
    return res.body === '' ? [] : [`${operation} ${res.statusCode} documents no body but got ${res.body}`]
  }
  const media = documented.content[contentType]
  if (!media) return [`${operation} ${res.statusCode} answered ${contentType}, not documented`]
  if (!media.schema) return []
  const validate = ajv.compile(media.schema)
  const body: unknown = res.body === '' ? undefined : JSON.parse(res.body)
  if (validate(body)) return []
  return [`${operation} ${res.statusCode}: ${ajv.errorsText(validate.errors)} in ${res.body}`]
}

/** Every route of an app as "METHOD /path/{param}", from printRoutes (HEAD and CORS preflights' OPTIONS left out). */
export function registeredRoutes(app: FastifyInstance): string[] {
  const routes: string[] = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ├└─]*)(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = match[1]!.length / 4 - 1
    stack.length = depth
    stack.push(match[2]!)
    const path = stack.join('').replace(/:(\w+)/g, '{$1}')
    const methods = match[3]?.split(', ') ?? []
    for (const method of methods)
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push(`${method} ${path}`)
  }
  return routes
}

/** Every operation of a document as "METHOD /path". */
export function documentedOperations(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  )
}
