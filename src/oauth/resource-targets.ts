import { invalidScope, invalidTarget, type OAuthErrorCode } from '../errors.js'
import { commonScopes } from '../lib/scopes.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import type { Config } from '../config.js'
import type { ResourceServerService, ResourceTarget } from '../resource-servers/resource-server.service.js'

export type { ResourceTarget }
type Targets = Pick<ResourceServerService, 'findTargets'>

export type AuthorizationTargets =
  | {
      ok: true
      targets: ResourceTarget[]
      /** The request's scopes; defaults narrowed to those the named APIs serve. */
      scopes: string[]
    }
  | { ok: false; error: OAuthErrorCode; description: string }

/** RFC 8707 §2: what REQUIRE_RESOURCE answers a request that names no API. */
export const RESOURCE_REQUIRED =
  "resource is required: name the API the token is for (RFC 8707), one of the authorization server's protected_resources."

/**
 * RFC 8707 §2 at the authorization endpoint: every named resource must be an enabled, registered
 * API, and must serve at least one requested scope. The second rule is ours (the RFC leaves it
 * open): a token for that API could carry no scope, so we refuse now rather than burn the code later.
 * With `required` (REQUIRE_RESOURCE), naming none is `invalid_target` ("missing", RFC 8707 §2).
 * A request that named no scope (`scopesDefaulted`: `scopes` are the client's defaults) gets only
 * the defaults the named APIs serve, so that consent and tokens hold no scope those APIs cannot use.
 */
export async function authorizationTargets(
  finder: Targets,
  resources: string[],
  scopes: string[],
  options: { required?: boolean; scopesDefaulted?: boolean } = {},
): Promise<AuthorizationTargets> {
  if (resources.length === 0)
    return options.required
      ? { ok: false, error: 'invalid_target', description: RESOURCE_REQUIRED }
      : { ok: true, targets: [], scopes }
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
        description: options.scopesDefaulted
          ? "A resource serves none of this application's default scopes: name the scopes to ask for (scope)."
          : 'A resource serves none of the requested scopes.',
      }
    targets.push(target)
  }
  const served = options.scopesDefaulted
    ? scopes.filter((s) => targets.some((target) => target.scopes.includes(s)))
    : scopes
  return { ok: true, targets, scopes: served }
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
  /** `aud`: the one API named, or (none named) the default audience and every API serving a scope. */
  audience: string | string[]
  scopes: string[]
}

/**
 * The audience and scope of an access token: the named target, else the authorization's only
 * resource (each: that API alone, with the granted scopes it serves). The statements that consumed
 * the code or rotated the token already refused a named resource outside the authorization and a
 * silent request for an authorization of several.
 *
 * A token asked for without any resource is for every API that serves one of its scopes (RFC 9068
 * §4: an API accepts a token whose `aud` contains its identifier): `aud` lists the default audience
 * (the APIs registered without a resource, which take every scope) and each enabled, registered API
 * serving at least one granted scope, read from the registry at each issue; `scope` is every granted
 * scope, each API enforcing its own. With REQUIRE_RESOURCE such a token is not issued.
 */
export function createTokenAudiences(
  config: Pick<Config, 'accessTokenAudience' | 'requireResource'>,
  finder: Pick<ResourceServerService, 'findTargets'>,
) {
  function forAllServing(scopes: string[], serving: string[] | undefined): TokenAudience {
    if (config.requireResource) throw invalidTarget(RESOURCE_REQUIRED)
    // Read by the statement that issued the refresh token (RefreshTokenIssue.servingResources).
    if (!serving) throw new Error('the issuing statement did not read the APIs serving these scopes')
    return {
      audience: serving.length === 0 ? config.accessTokenAudience : [config.accessTokenAudience, ...serving],
      scopes,
    }
  }

  return {
    async audienceOf(
      named: ResourceTarget | undefined,
      authorized: readonly string[],
      scopes: string[],
      /** The serving APIs as the issuing statement read them (RefreshTokenIssue.servingResources). */
      serving?: string[],
    ): Promise<TokenAudience> {
      let target = named
      if (!target && authorized.length > 0) {
        const [only] = authorized as [string]
        target = (await finder.findTargets([only])).get(only)
        if (!target) throw invalidTarget('The resource of this authorization is no longer a registered API.')
      }
      if (!target) return forAllServing(scopes, serving)
      const served = commonScopes(scopes, target.scopes)
      if (served.length === 0) throw invalidScope(`No granted scope is served by ${target.resource}.`)
      return { audience: target.resource, scopes: served }
    },
  }
}

export type TokenAudiences = ReturnType<typeof createTokenAudiences>
