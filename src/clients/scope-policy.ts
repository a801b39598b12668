import { ALL_SCOPES } from '../lib/scopes.js'
import { type Client, type ClientKind, defaultScopesOf } from './client.repository.js'

/**
 * The scopes of a client that registered itself (RFC 7591) or is known by its metadata document
 * (issue 38): what it says it wants (its `scope`) is its DEFAULT, what a request without `scope`
 * gets; the most it may be granted is the operator's policy for its kind, so that an agent that
 * first asked for `links:read` can ask for `links:write` after a 403 without registering again
 * (docs/design.md §4, "Scopes"). The settings it reads are Config's fields of these names, spelled
 * out here so that the configuration's own check (config/clients.ts) can use this module.
 */
export interface ScopePolicyConfig {
  clientMetadataScopes: readonly string[]
  dynamicRegistrationScopes: readonly string[]
  clientMetadataDefaultScopes: readonly string[]
  dynamicRegistrationDefaultScopes: readonly string[]
}

/** How an application came in without the operator: its standing on arrival (vouched, unverified). */
export type SelfRegisteredKind = Exclude<ClientKind, 'registered'>

/** What the operator lets an application of a kind be given (issue 37 part 4). */
export interface ScopePolicy {
  /** The most it may be granted; a registration or document stating only others is refused. */
  maximum: readonly string[]
  /**
   * What a request without `scope` gets when the application stated no scope of its own
   * (CLIENT_METADATA_DEFAULT_SCOPES, DYNAMIC_REGISTRATION_DEFAULT_SCOPES; within the maximum, checked
   * at start); undefined when the operator set none: all of the maximum.
   */
  defaults: readonly string[] | undefined
}

/**
 * The operator's policy for applications that came in by themselves, by kind: a metadata document
 * (vouched for by its host) gets CLIENT_METADATA_SCOPES, a dynamic registration (unverified)
 * DYNAMIC_REGISTRATION_SCOPES, or CLIENT_METADATA_SCOPES while that is unset (the one setting both
 * kinds had before); empty: every scope. Its defaults are each kind's own setting
 * (CLIENT_METADATA_DEFAULT_SCOPES, DYNAMIC_REGISTRATION_DEFAULT_SCOPES: no fall-back from one to the
 * other). The one home of this rule.
 */
export function scopePolicyFor(config: ScopePolicyConfig, kind: SelfRegisteredKind): ScopePolicy {
  const configured =
    kind === 'dynamic' && config.dynamicRegistrationScopes.length > 0
      ? config.dynamicRegistrationScopes
      : config.clientMetadataScopes
  const defaults =
    kind === 'dynamic' ? config.dynamicRegistrationDefaultScopes : config.clientMetadataDefaultScopes
  return {
    maximum: configured.length > 0 ? configured : ALL_SCOPES,
    defaults: defaults.length > 0 ? defaults : undefined,
  }
}

/** The operator's ceiling for a self-registered kind (scopePolicyFor's maximum), as a list of its own. */
export function selfRegisteredScopeCeiling(config: ScopePolicyConfig, kind: SelfRegisteredKind): string[] {
  return [...scopePolicyFor(config, kind).maximum]
}

/**
 * A self-registered client's `scopes` (the ceiling) and `defaultScopes` (what it stated, within the
 * ceiling; null when it stated none of ours: all of the ceiling). Undefined when it stated scopes
 * and the policy gives it none of them: such an application is refused, as before.
 */
export function selfRegisteredScopes(
  config: ScopePolicyConfig,
  kind: Exclude<ClientKind, 'registered'>,
  stated: readonly string[] | null,
): { scopes: string[]; defaultScopes: string[] | null } | undefined {
  const scopes = selfRegisteredScopeCeiling(config, kind)
  if (stated === null) return { scopes, defaultScopes: null }
  const defaultScopes = scopes.filter((s) => stated.includes(s))
  return defaultScopes.length > 0 ? { scopes, defaultScopes } : undefined
}

/**
 * What an authorization request of this client may ask for now, and what it gets without `scope`
 * (undefined: no default applies). An operator's client: its scopes and defaults. A self-registered
 * one: those within the policy as it is now, so that narrowing CLIENT_METADATA_SCOPES bounds the
 * registrations made before too (a dynamic registration's row keeps the ceiling it registered
 * under); its default is the scope it stated, or when it stated none the operator's default for its
 * kind (else all it may ask for).
 */
export function requestableScopes(
  config: ScopePolicyConfig,
  client: Pick<Client, 'kind' | 'scopes' | 'defaultScopes'>,
): { allowed: string[]; defaults: string[] | undefined } {
  const policy = client.kind === 'registered' ? undefined : scopePolicyFor(config, client.kind)
  const ceiling = policy?.maximum ?? client.scopes
  const allowed = client.scopes.filter((s) => ceiling.includes(s))
  const stated = client.defaultScopes ?? policy?.defaults ?? defaultScopesOf(client)
  const defaults = stated.filter((s) => allowed.includes(s))
  return { allowed, defaults: defaults.length > 0 ? defaults : undefined }
}
