import { describe, expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/errors.js'
import { randomToken } from '../../src/lib/secrets.js'
import {
  deleteResourceServer,
  findResourceServerCredentials,
  findResourceTargets,
  insertResourceServer,
  listEnabledResources,
  replaceResourceServerSecret,
  setResourceServerDisabled,
} from '../../src/resource-servers/resource-server.repository.js'
import { now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Resource servers in storage: credentials, secret rotation, lifecycle, targets by resource. (The
 * shared storage suite, run on PostgreSQL and PGlite: storage-suite.ts.)
 */
const { database } = storageSuite()

describe(STORAGE_ON, () => {
  describe('resource servers', () => {
    it('finds the secret hash and resource of an enabled server only', async () => {
      const db = database.db
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      expect(server).toMatchObject({ resource: null, scopes: [] })
      expect(await findResourceServerCredentials(db, server.id)).toEqual({
        secretHash: 'h',
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        resource: null,
      })
      await db.updateTable('resource_servers').set({ disabled_at: now }).where('id', '=', server.id).execute()
      expect(await findResourceServerCredentials(db, server.id)).toBeUndefined()
    })

    it('replaces the secret keeping the old hash until the overlap ends, or not at all; disables, enables, deletes', async () => {
      const db = database.db
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h1',
      })
      const until = new Date(now.getTime() + 3600_000)
      expect(await replaceResourceServerSecret(db, server.id, 'h2', until)).toMatchObject({
        previousSecretExpiresAt: until,
      })
      expect(await findResourceServerCredentials(db, server.id)).toMatchObject({
        secretHash: 'h2',
        previousSecretHash: 'h1',
        previousSecretExpiresAt: until,
      })
      await replaceResourceServerSecret(db, server.id, 'h3', null)
      expect(await findResourceServerCredentials(db, server.id)).toMatchObject({
        secretHash: 'h3',
        previousSecretHash: null,
        previousSecretExpiresAt: null,
      })
      expect(await replaceResourceServerSecret(db, 'rs_nobody', 'h', null)).toBeUndefined()

      const disabled = await setResourceServerDisabled(db, server.id, now)
      expect(disabled?.disabledAt).toEqual(now)
      expect((await setResourceServerDisabled(db, server.id, until))?.disabledAt).toEqual(now)
      expect((await setResourceServerDisabled(db, server.id, null))?.disabledAt).toBeNull()
      expect(await deleteResourceServer(db, server.id)).toMatchObject({ id: server.id })
      expect(await deleteResourceServer(db, server.id)).toBeUndefined()
    })

    it('finds targets: enabled servers whose resource is exactly one of the strings, in one statement', async () => {
      const db = database.db
      const base = `https://${randomToken(6).toLowerCase()}.example`
      const insert = (resource: string | null, scopes: string[] = []) =>
        insertResourceServer(db, {
          id: `rs_${randomToken(8)}`,
          name: `API ${resource}`,
          secretHash: 'h',
          resource,
          scopes,
        })
      const links = await insert(`${base}/links`, ['links:read', 'links:write'])
      const shop = await insert(`${base}/shop`, ['ecommerce:write'])
      const retired = await insert(`${base}/retired`, ['links:read'])
      await insert(null)
      await db
        .updateTable('resource_servers')
        .set({ disabled_at: now })
        .where('id', '=', retired.id)
        .execute()

      const found = await findResourceTargets(db, [
        `${base}/links`,
        `${base}/shop`,
        `${base}/retired`,
        `${base}/links/`, // no normalisation: another string is another resource
        `${base.toUpperCase()}/links`,
        `${base}/unknown`,
      ])
      expect(found.sort((a, b) => a.resource.localeCompare(b.resource))).toEqual([
        { id: links.id, name: links.name, resource: `${base}/links`, scopes: ['links:read', 'links:write'] },
        { id: shop.id, name: shop.name, resource: `${base}/shop`, scopes: ['ecommerce:write'] },
      ])
      expect(await findResourceTargets(db, [])).toEqual([])
      const listed = await listEnabledResources(db)
      expect(listed).toEqual(expect.arrayContaining([`${base}/links`, `${base}/shop`]))
      expect(listed).not.toContain(`${base}/retired`)
    })

    it('refuses a second resource server with the same resource (unique violation)', async () => {
      const db = database.db
      const resource = `https://${randomToken(6).toLowerCase()}.example/api`
      await insertResourceServer(db, { id: `rs_${randomToken(8)}`, name: 'One', secretHash: 'h', resource })
      const second = insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'Two',
        secretHash: 'h',
        resource,
      })
      await expect(second).rejects.toSatisfy(isUniqueViolation)
    })
  })
})
