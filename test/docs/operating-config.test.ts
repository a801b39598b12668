import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { configSchema, loadConfig } from '../../src/config.js'
import { tableAfter } from '../helpers/markdown.js'

/** The variable named in a row's first cell: `NAME`. */
const nameOf = (cell: string) => /^`([A-Z_]+)`$/.exec(cell)?.[1] ?? `(bad cell ${cell})`

/** The Config key loadConfig gives a variable: NODE_ENV → env, others camelCase. */
const keyOf = (name: string) =>
  name === 'NODE_ENV' ? 'env' : name.toLowerCase().replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())

const schemaNames = Object.keys(configSchema.shape).sort()

describe('docs/operating.md configuration reference', () => {
  const rows = tableAfter(readFileSync('docs/operating.md', 'utf8'), '## Configuration reference')

  it('names exactly the variables of configSchema, once each', () => {
    const names = rows.map((r) => nameOf(r[0]!))
    expect([...names].sort()).toEqual(schemaNames)
    expect(new Set(names).size).toBe(names.length)
  })

  it('prints the default the server uses for each variable with one', () => {
    const defaults = loadConfig({}) as unknown as Record<string, unknown>
    for (const [nameCell, defaultCell] of rows) {
      const name = nameOf(nameCell!)
      const key = keyOf(name)
      expect(Object.hasOwn(defaults, key), `${name} → Config.${key}`).toBe(true)
      const value = defaults[key]
      const shown = /^`([^`]*)`/.exec(defaultCell!)?.[1]
      if (value === undefined) {
        expect(shown, `${name} has no default; its cell must not start with a value`).toBeUndefined()
      } else {
        expect(shown, `${name}: default cell ${defaultCell}`).toBe(String(value))
      }
    }
  })
})

describe('README.md configuration table', () => {
  it('names the same variables', () => {
    const rows = tableAfter(readFileSync('README.md', 'utf8'), '## Configuration')
    expect(rows.map((r) => nameOf(r[0]!)).sort()).toEqual(schemaNames)
  })
})
