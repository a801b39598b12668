import { invalidClient } from '../errors.js'
import { parseBasicAuthorization } from '../web/basic-auth.js'
import type { AuthenticatedResourceServer, ResourceServerService } from './resource-server.service.js'

/**
 * The resource server calling introspection or the revocation event feed, by its HTTP Basic
 * credentials: its id and resource, or 401 invalid_client (the error handler adds
 * WWW-Authenticate: Basic).
 */
export async function identifyResourceServer(
  authorization: string | undefined,
  servers: Pick<ResourceServerService, 'authenticate'>,
): Promise<AuthenticatedResourceServer> {
  const credentials = parseBasicAuthorization(authorization)
  const server = credentials && (await servers.authenticate(credentials.id, credentials.secret))
  if (!server) throw invalidClient('Resource server authentication failed.')
  return server
}

/** The calling resource server's id (the event feed needs no more). */
export async function authenticateResourceServer(
  authorization: string | undefined,
  servers: Pick<ResourceServerService, 'authenticate'>,
): Promise<string> {
  return (await identifyResourceServer(authorization, servers)).id
}
