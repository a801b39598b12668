import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { newResourceServerSchema } from '../../src/resource-servers/resource-server.schemas.js'
import type { TestApp } from './app.js'

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

/** The example APIs (examples/links-api, examples/commerce-api) as README's manual setup registers them. */
export const LINKS_EXAMPLE_API = {
  name: 'Links API',
  resource: 'https://links.example.com/api',
  scopes: ['links:read', 'links:write'],
}
export const COMMERCE_EXAMPLE_API = {
  name: 'Commerce API',
  resource: 'https://commerce.example.com/api',
  scopes: ['ecommerce:write', 'products:sync'],
}

/** Registers a resource server with its identifier and scopes, as the operator does; returns its credentials. */
export async function registerApi(
  t: TestApp,
  api: { name: string; resource: string; scopes: string[] },
): Promise<{ id: string; secret: string }> {
  const { id, secret } = await t.services.resourceServers.createResourceServer(
    newResourceServerSchema.parse(api),
  )
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
