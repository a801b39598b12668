/**
 * Who the CLI is to linkauth, the way a third-party tool gets there: a client id given by flag (a
 * Client ID Metadata Document URL it publishes, or one the operator registered), or else its own
 * dynamic registration (RFC 7591) as a public, device-only client: no redirect URI, no secret.
 * Either is kept in client.json and reused by every later login.
 */
import { DEVICE_CODE_GRANT_TYPE, type Discovered } from './discovery.js'
import { CliFailure, describe, EXIT, request } from './http.js'
import type { ClientFile, Store } from './store.js'

export const CLIENT_NAME = 'Links CLI'

/** What the CLI states about itself, in its registration and in a metadata document it would publish. */
export function clientMetadata(scopes: readonly string[]) {
  return {
    client_name: CLIENT_NAME,
    grant_types: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  }
}

export async function clientFor(
  store: Store,
  found: Discovered,
  given: string | undefined,
  say: (line: string) => void,
): Promise<ClientFile> {
  const { server } = found
  if (given) {
    const isDocument = given.startsWith('https://')
    if (isDocument && server.client_id_metadata_document_supported !== true)
      throw new CliFailure(`${server.issuer} does not accept client id metadata documents.`, EXIT.USAGE)
    const client: ClientFile = {
      api: found.api,
      issuer: server.issuer,
      client_id: given,
      registered_by: isDocument ? 'metadata_document' : 'given',
    }
    store.writeClient(client)
    return client
  }
  const kept = store.readClient()
  if (kept && kept.issuer === server.issuer) {
    if (kept.api !== found.api) store.writeClient({ ...kept, api: found.api })
    return kept
  }
  return register(store, found, say)
}

/** RFC 7591 registration, kept in client.json. */
export async function register(
  store: Store,
  found: Discovered,
  say: (line: string) => void,
): Promise<ClientFile> {
  const { server } = found
  if (!server.registration_endpoint)
    throw new CliFailure(
      `${server.issuer} does not let applications register themselves. Ask its operator for a client id ` +
        `(linkauth clients create --grant-type ${DEVICE_CODE_GRANT_TYPE} …) or publish a client id metadata ` +
        `document, and pass it with --client-id.`,
      EXIT.USAGE,
    )
  const answer = await request(server.registration_endpoint, { json: clientMetadata(found.scopes) })
  if (answer.status !== 201 || typeof answer.json?.client_id !== 'string')
    throw new CliFailure(`Registration at ${server.issuer} failed: ${describe(answer)}`)
  const client: ClientFile = {
    api: found.api,
    issuer: server.issuer,
    client_id: answer.json.client_id as string,
    registered_by: 'dynamic',
    ...(typeof answer.json.registration_access_token === 'string'
      ? { registration_access_token: answer.json.registration_access_token as string }
      : {}),
  }
  store.writeClient(client)
  say(`Registered with ${server.issuer} as "${CLIENT_NAME}" (client id ${client.client_id}).`)
  return client
}
