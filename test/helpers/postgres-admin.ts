import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { connectDatabase } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrator.js'

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`
}

/** Creates a database, migrates it to the newest schema, and returns its name for use as a template. */
export async function createTemplateDatabase(adminUrl: string): Promise<string> {
  const name = uniqueName('linkauth_template')
  await withAdmin(adminUrl, (c) => c.query(`create database ${name}`))
  const handle = await connectDatabase({ databaseUrl: databaseUrl(adminUrl, name), poolSize: 1 })
  try {
    await migrateToLatest(handle.db)
  } finally {
    await handle.close()
  }
  return name
}

export async function createDatabaseFromTemplate(adminUrl: string, template: string): Promise<string> {
  const name = uniqueName('linkauth_test')
  await withAdmin(adminUrl, (c) => c.query(`create database ${name} template ${template}`))
  return name
}

export async function createEmptyDatabase(adminUrl: string): Promise<string> {
  const name = uniqueName('linkauth_empty')
  await withAdmin(adminUrl, (c) => c.query(`create database ${name}`))
  return name
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`))
}
