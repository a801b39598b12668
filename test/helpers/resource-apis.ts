import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { newResourceServerId, newSecret } from '../../src/lib/identifiers.js'
import { sha256 } from '../../src/lib/secrets.js'

/** Two APIs of the service, as an operator registers them (RFC 8707 identifiers and their scopes). */
export const LINKS_API = {
  name: 'Short links API',
  resource: 'https://links.example/api',
  scopes: ['links:read', 'links:write'],
}
export const SHOP_API = {
  name: 'Shop API',
  resource: 'https://shop.example/api',
  scopes: ['ecommerce:write', 'products:sync'],
}

/**
 * Registers a resource server with its identifier and scopes straight in the database (the admin
 * API's `{name, resource, scopes}` arrives on another branch); returns its introspection credentials.
 */
export async function registerApi(
  db: Kysely<Database>,
  api: { name: string; resource: string; scopes: string[] },
): Promise<{ id: string; secret: string }> {
  const id = newResourceServerId()
  const secret = newSecret()
  await db
    .insertInto('resource_servers')
    .values({ id, name: api.name, secret_hash: sha256(secret), resource: api.resource, scopes: api.scopes })
    .execute()
  return { id, secret }
}

/** Disables the resource server with this identifier (as the operator would), or enables it again. */
export async function setApiDisabled(db: Kysely<Database>, resource: string, disabled: boolean) {
  await db
    .updateTable('resource_servers')
    .set({ disabled_at: disabled ? new Date() : null })
    .where('resource', '=', resource)
    .execute()
}
