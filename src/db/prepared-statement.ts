import {
  type Compilable,
  type CompiledQuery,
  type RawBuilder,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely'
import type { Database } from './database.js'

/**
 * A statement of a hot path, built with Kysely ONCE (when its module loads) and then run with new
 * values on every call. Building and compiling a query tree costs more server CPU than PostgreSQL
 * spends running a primary-key lookup (about a tenth of a request's CPU in the benchmarks); the same
 * SQL text also finds its prepared-statement name at once in the preparing pool (see connect.ts).
 *
 * `build` receives placeholders typed as the values they stand for; at run time each one is replaced,
 * in order, by the value of the same name (which must be there: null, not undefined, for SQL NULL). A
 * placeholder must be used as a single value (a parameter of the SQL): a list goes in as one array
 * parameter (`= any(${v.ids}::text[])`), never as `in (…)`, which Kysely would compile to `in $1`;
 * and never in JavaScript inside `build` (it runs once, with placeholders, not with the values).
 */
export function prepareStatement<Values extends object, Row>(
  build: (db: Kysely<Database>, values: Values) => Compilable<Row> | RawBuilder<Row>,
): PreparedStatement<Values, Row> {
  const used = new Set<string>()
  const placeholders = new Proxy({} as Values, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined
      used.add(name)
      return new Placeholder(name)
    },
  })
  const built = build(compileOnly, placeholders)
  const compiled = 'isRawBuilder' in built ? built.compile(compileOnly) : built.compile()
  const slots = [...compiled.parameters]
  // A placeholder that did not become a parameter was used in a way Kysely does not send as a value.
  for (const name of used) {
    if (!slots.some((slot) => slot instanceof Placeholder && slot.name === name))
      throw new Error(`prepareStatement: "${name}" is not a parameter of: ${compiled.sql}`)
  }
  return {
    sql: compiled.sql,
    async execute(db: Kysely<Database>, values: Values): Promise<Row[]> {
      const parameters = slots.map((slot) => {
        if (!(slot instanceof Placeholder)) return slot
        // A missing value would silently be NULL; Kysely itself would have left the column out.
        if (!(slot.name in values)) throw new Error(`prepareStatement: no value for "${slot.name}"`)
        return (values as Record<string, unknown>)[slot.name]
      })
      const query: CompiledQuery<Row> = { ...compiled, parameters }
      return (await db.executeQuery(query)).rows
    },
  }
}

/**
 * A list of inputs as the values of a statement over a list: one array per column, in the inputs'
 * order, for `unnest(${v.ids}::uuid[], ${v.names}::text[], …) with ordinality` (the casts in the SQL
 * say each column's type to PostgreSQL). `pick` names each column and reads it off an input; each
 * column's element type is what its `pick` answers (null, not undefined, for SQL NULL).
 */
export function columnsOf<Input, Columns extends object>(
  inputs: readonly Input[],
  pick: { [Name in keyof Columns]: (input: Input) => Columns[Name] },
): { [Name in keyof Columns]: Columns[Name][] } {
  const columns = {} as { [Name in keyof Columns]: Columns[Name][] }
  for (const name of Object.keys(pick) as (keyof Columns)[]) {
    const read = pick[name]
    columns[name] = inputs.map((input) => read(input))
  }
  return columns
}

export interface PreparedStatement<Values, Row> {
  /** The SQL text, fixed for the life of the process. */
  readonly sql: string
  /** Runs the statement on `db` (a pool or a transaction) with these values; returns its rows. */
  execute(db: Kysely<Database>, values: Values): Promise<Row[]>
}

/** Stands for a named value while the statement is compiled. */
class Placeholder {
  constructor(readonly name: string) {}
}

/** Compiles PostgreSQL SQL and never connects: the text is the same on PostgreSQL and on PGlite. */
const compileOnly = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})
