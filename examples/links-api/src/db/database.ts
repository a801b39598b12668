import type { ColumnType, Generated, Selectable } from 'kysely'
import type { AppWriteCountsDatabase } from '../../../shared/app-leash.js'

/** bigint columns: pg reads them as strings, PGlite as numbers; rows pass through Number(). */
type BigIntColumn = ColumnType<string | number, number | undefined, number>

export interface LinksTable {
  id: Generated<string>
  seq: ColumnType<string | number, never, never>
  owner_id: string
  slug: string
  target_url: string
  tags: string[]
  clicks: BigIntColumn
  created_at: ColumnType<Date, Date, never>
  updated_at: ColumnType<Date, Date, Date>
  /** Imported links: the title and the clicks the other service counted (not in `clicks`). */
  title: ColumnType<string | null, string | null | undefined, never>
  imported_clicks: ColumnType<string | number, number | undefined, never>
  /** An imported link's key (imports/import-row.ts): unique per owner, so a re-import creates nothing twice. */
  import_key: ColumnType<string | null, string | null | undefined, never>
}

export interface LinkDailyClicksTable {
  link_id: string
  /** A UTC calendar day; read as text (`day::text`) so no driver turns it into a local-time Date. */
  day: ColumnType<string, string, never>
  clicks: BigIntColumn
}

export interface ImportJobsTable {
  id: Generated<string>
  owner_id: string
  format: string
  state: string
  lines_read: ColumnType<number, number | undefined, number>
  rows_staged: ColumnType<number, number | undefined, number>
  created: ColumnType<number, number | undefined, number>
  skipped: ColumnType<number, number | undefined, number>
  conflicts: ColumnType<number, number | undefined, number>
  invalid: ColumnType<number, number | undefined, number>
  next_line: ColumnType<number, number | undefined, number>
  error: string | null
  lease_until: Date | null
  created_at: ColumnType<Date, Date | undefined, never>
  updated_at: ColumnType<Date, Date | undefined, Date>
  finished_at: Date | null
  /** The application that started the import, and the hour its rows were counted in (app-leash.ts). */
  client_id: ColumnType<string | null, string | null | undefined, string | null>
  leash_window: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface ImportRowsTable {
  job_id: string
  line: number
  /** An ImportRow (imports/import-row.ts), validated and normalised. */
  row: ColumnType<unknown, string, never>
}

export interface ImportProblemsTable {
  job_id: string
  line: number
  kind: string
  field: string | null
  reason: string
}

/** The tables of schema `links_api`, as the links API's Kysely instance sees them. */
export interface LinksDatabase extends AppWriteCountsDatabase {
  links: LinksTable
  link_daily_clicks: LinkDailyClicksTable
  import_jobs: ImportJobsTable
  import_rows: ImportRowsTable
  import_problems: ImportProblemsTable
}

export type LinkRow = Selectable<LinksTable>
export type ImportJobRow = Selectable<ImportJobsTable>
