import type { ColumnType, Generated, Selectable } from 'kysely'

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
}

export interface LinkDailyClicksTable {
  link_id: string
  /** A UTC calendar day; read as text (`day::text`) so no driver turns it into a local-time Date. */
  day: ColumnType<string, string, never>
  clicks: BigIntColumn
}

/** The tables of schema `links_api`, as the links API's Kysely instance sees them. */
export interface LinksDatabase {
  links: LinksTable
  link_daily_clicks: LinkDailyClicksTable
}

export type LinkRow = Selectable<LinksTable>
