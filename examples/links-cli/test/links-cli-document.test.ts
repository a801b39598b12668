import { afterAll, beforeAll, expect, it } from 'vitest'
import { type DocumentServer, startDocumentServer } from '../../../test/helpers/document-server.js'
import { EXIT } from '../src/http.js'
import { clientMetadata } from '../src/registration.js'
import { completeUriIn, linksCliWorld } from './links-cli-world.js'

/**
 * The links CLI identified by a Client ID Metadata Document its publisher serves (login
 * --client-id URL): a device-only document without redirect_uris is accepted, and the approval
 * page shows the app as vouched for by the document's host.
 */
let documents: DocumentServer
beforeAll(async () => {
  documents = await startDocumentServer()
})
afterAll(async () => documents?.close())
const { person, approve, user } = linksCliWorld(() => ({ CLIENT_METADATA_TEST_CA: documents.caPath }))

it('logs in with a metadata document URL as its client id, registering nothing', async () => {
  const url = documents.url('/links-cli.json')
  documents.publish('/links-cli.json', { client_id: url, ...clientMetadata(['links:read', 'links:write']) })
  const email = await person()
  const cli = user()
  let consent = ''
  cli.onSleep(async (n, out) => {
    if (n === 1) consent = (await approve(completeUriIn(out), email, 'allow')).consent
  })
  const login = await cli.run(['login', '--client-id', url])
  expect(login.code, login.err).toBe(EXIT.OK)
  expect(cli.output()).not.toContain('Registered with')
  expect(cli.session().client_id).toBe(url)
  expect(consent).toContain('data-standing="vouched"')
  expect(consent).toContain(new URL(url).host)
  expect((await cli.run(['list'])).code).toBe(EXIT.OK)
})
