import { invalidScope, invalidTarget, type OAuthErrorCode } from '../errors.js'
import { commonScopes } from '../lib/scopes.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import type { ResourceServerService, ResourceTarget } from '../resource-servers/resource-server.service.js'

export type { ResourceTarget }
type Targets = Pick<ResourceServerService, 'findTargets'>

export type AuthorizationTargets =
  { ok: true; targets: ResourceTarget[] } | { ok: false; error: OAuthErrorCode; description: string }

/**
 * RFC 8707 §2 at the authorization endpoint: every named resource must be an enabled, registered
 * API, and must serve at least one requested scope. The second rule is ours (the RFC leaves it
 * open): a token for that API could carry no scope, so we refuse now rather than burn the code later.
 */
export async function authorizationTargets(
  finder: Targets,
  resources: string[],
  scopes: readonly string[],
): Promise<AuthorizationTargets> {
  if (resources.length === 0) return { ok: true, targets: [] }
  const found = await finder.findTargets(resources)
  const targets: ResourceTarget[] = []
  for (const resource of resources) {
    const target = found.get(resource)
    if (!target)
      return {
        ok: false,
        error: 'invalid_target',
        description: 'A resource is not a registered, enabled API.',
      }
    if (commonScopes(scopes, target.scopes).length === 0)
      return {
        ok: false,
        error: 'invalid_scope',
        description: 'A resource serves none of the requested scopes.',
      }
    targets.push(target)
  }
  return { ok: true, targets }
}

/**
 * The token endpoint's `resource` (one audience per token, RFC 8707 §2.2), read and looked up before
 * the code or refresh token is touched, so a bad one consumes nothing; likewise a narrower `scope`
 * that this API serves none of.
 */
export async function namedTokenTarget(
  finder: Targets,
  resource: string | undefined,
  requestedScopes?: readonly string[],
): Promise<ResourceTarget | undefined> {
  if (resource === undefined) return undefined
  const problem = resourceIdentifierProblem(resource)
  if (problem) throw invalidTarget(`resource ${problem}.`)
  const target = (await finder.findTargets([resource])).get(resource)
  if (!target) throw invalidTarget('resource is not a registered, enabled API.')
  if (requestedScopes && commonScopes(requestedScopes, target.scopes).length === 0)
    throw invalidScope('This resource serves none of the requested scopes.')
  return target
}

/** Who a token is for once the authorization is known, and its scope there (RFC 8707 §2.2). */
export interface TokenAudience {
  /** The resource identifier; undefined for the default audience. */
  audience?: string
  scopes: string[]
}

/**
 * The audience and scope of an access token: the named target, else the authorization's only
 * resource, else (no resource at all) the default audience with every granted scope. The statements
 * that consumed the code or rotated the token already refused a named resource outside the
 * authorization and a silent request for an authorization of several.
 */
export async function tokenAudience(
  finder: Targets,
  named: ResourceTarget | undefined,
  authorized: readonly string[],
  scopes: string[],
): Promise<TokenAudience> {
  let target = named
  if (!target && authorized.length > 0) {
    const [only] = authorized as [string]
    target = (await finder.findTargets([only])).get(only)
    if (!target) throw invalidTarget('The resource of this authorization is no longer a registered API.')
  }
  if (!target) return { scopes }
  const served = commonScopes(scopes, target.scopes)
  if (served.length === 0) throw invalidScope(`No granted scope is served by ${target.resource}.`)
  return { audience: target.resource, scopes: served }
}
