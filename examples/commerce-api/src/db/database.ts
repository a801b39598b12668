import type { ColumnType, Generated, Selectable } from 'kysely'
import type { AppWriteCountsDatabase } from '../../../shared/app-leash.js'

/** bigint columns: pg reads them as strings, PGlite as numbers; rows pass through BigInt() or Number(). */
type BigIntColumn = ColumnType<string | number, number | string | bigint, number | string | bigint>
type Created = ColumnType<Date, Date, never>

export interface SyncRunsTable {
  id: Generated<string>
  owner_id: string
  status: ColumnType<'open' | 'completed', 'open' | undefined, 'completed'>
  started_at: Created
  completed_at: ColumnType<Date | null, never, Date>
  marked_unavailable: ColumnType<number | null, never, number>
}

export interface ProductsTable {
  id: Generated<string>
  owner_id: string
  shop_product_id: string
  title: string
  url: string
  price_minor: BigIntColumn
  currency: string
  availability: string
  image_url: string | null
  last_sync_run_id: string | null
  created_at: Created
  updated_at: ColumnType<Date, Date, Date>
}

export interface LinksTable {
  id: Generated<string>
  seq: ColumnType<string | number, never, never>
  owner_id: string
  slug: string
  product_id: string | null
  target_url: string | null
  campaign: string | null
  utm_source: string | null
  utm_medium: string | null
  utm_campaign: string | null
  utm_term: string | null
  utm_content: string | null
  created_at: Created
  /** Set when its owner archived it: the short URL answers 410 and counts nothing. */
  archived_at: ColumnType<Date | null, never, Date | null>
}

export interface ClicksTable {
  id: string
  link_id: string
  clicked_at: Created
}

export interface ConversionsTable {
  id: Generated<string>
  owner_id: string
  order_id: string
  click_id: string
  link_id: string
  value_minor: BigIntColumn
  currency: string
  occurred_at: Created
  created_at: Created
}

/** The tables of schema `commerce_api`, as the commerce API's Kysely instance sees them. */
export interface CommerceDatabase extends AppWriteCountsDatabase {
  sync_runs: SyncRunsTable
  products: ProductsTable
  links: LinksTable
  clicks: ClicksTable
  conversions: ConversionsTable
}

export type ProductRow = Selectable<ProductsTable>
export type LinkRow = Selectable<LinksTable>
export type ConversionRow = Selectable<ConversionsTable>
