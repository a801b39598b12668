import type { createAdminClient } from './admin-client.js'

/** How a command calls the admin API. */
export type Request = ReturnType<typeof createAdminClient>
type Values = Record<string, string | string[] | boolean | undefined>

export interface Command {
  /** e.g. "clients create" */
  name: string
  usage: string
  summary: string
  options: Record<
    string,
    { type: 'string' | 'boolean'; multiple?: boolean; required?: boolean; description: string }
  >
  positionals?: string[]
  run(request: Request, values: Values, positionals: string[]): Promise<unknown>
  /** Human-readable output; JSON when --json is given. */
  show(result: unknown): string
}

/** Rows as aligned columns, two spaces apart. */
export const table = (rows: string[][]): string => {
  if (rows.length === 0) return ''
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** `?a=1&b=2` of the given values (repeated for lists); empty when none is given. */
export function query(values: Record<string, string | string[] | boolean | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') params.append(name, value)
    else if (Array.isArray(value)) for (const v of value) params.append(name, v)
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}
