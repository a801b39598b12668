import { invalidClient } from '../errors.js'
import { parseBasicAuthorization } from '../web/basic-auth.js'
import type { ResourceServerService } from './resource-server.service.js'

/**
 * The resource server calling introspection or the revocation event feed, by its HTTP Basic
 * credentials: its id, or 401 invalid_client (the error handler adds WWW-Authenticate: Basic).
 */
export async function authenticateResourceServer(
  authorization: string | undefined,
  servers: Pick<ResourceServerService, 'authenticate'>,
): Promise<string> {
  const credentials = parseBasicAuthorization(authorization)
  if (!credentials || !(await servers.authenticate(credentials.id, credentials.secret)))
    throw invalidClient('Resource server authentication failed.')
  return credentials.id
}
