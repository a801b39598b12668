import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import type { Database } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrator.js'

export type PGliteSnapshotKind = 'empty' | 'migrated'

/**
 * PGlite's counterpart of the PostgreSQL template database. A PGlite start runs initdb in
 * WebAssembly (a second engine, several seconds: most of a small test file's time) and the
 * migrations take about as long again; loading a saved data directory (PGlite's dumpDataDir, a tar)
 * takes a fraction of that. So the global setup makes one new cluster, saves it in `dir` as it is
 * (empty) and once migrated, and every test file's database starts from a copy.
 */
export async function makePGliteSnapshots(dir: string): Promise<void> {
  const client = await PGlite.create()
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  const save = async (kind: PGliteSnapshotKind) =>
    writeFileSync(pathOf(dir, kind), new Uint8Array(await (await client.dumpDataDir('none')).arrayBuffer()))
  try {
    await save('empty')
    await migrateToLatest(db)
    await save('migrated')
  } finally {
    await db.destroy()
  }
}

/**
 * A DATA_DIR as a server leaves it after its first start, less its secrets: `pglite/` holds a migrated
 * cluster. From the migrated snapshot where there is one (PGlite unpacks it), else a new cluster
 * migrated here. Tests that start the server as a process copy it (seededDataDir), so a start that is
 * not about the first one skips initdb and the migrations: most of a start's time under WebAssembly.
 */
export async function makeDataDirTemplate(dir: string, migratedSnapshot?: Blob): Promise<void> {
  mkdirSync(dir, { recursive: true })
  const client = await PGlite.create(
    join(dir, 'pglite'),
    migratedSnapshot ? { loadDataDir: migratedSnapshot } : {},
  )
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  try {
    if (!migratedSnapshot) await migrateToLatest(db)
  } finally {
    await db.destroy()
  }
}

/** A saved data directory, for connectDatabase's `pgliteSnapshot`. */
export function readPGliteSnapshot(dir: string, kind: PGliteSnapshotKind): Blob {
  return new Blob([readFileSync(pathOf(dir, kind))])
}

const pathOf = (dir: string, kind: PGliteSnapshotKind) => join(dir, `${kind}.tar`)
