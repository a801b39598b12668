import { type RawBuilder, sql } from 'kysely'

/**
 * SQL: the identifiers of the enabled resource servers that serve at least one of `scopes` (a text[]
 * expression), sorted, as one array value: the APIs a token asked for without `resource` is for (its
 * `aud` list, docs/design.md §4). The statements that issue a refresh token (code redemption,
 * rotation) embed it, so the token's audience is read in their own snapshot and costs no round trip
 * of its own; uncached, so a disabled API is left out of the next token at once.
 */
export const servingResourcesOf = (scopes: RawBuilder<unknown>) =>
  sql<string[]>`array(select rs.resource from resource_servers as rs
                       where rs.resource is not null and rs.disabled_at is null and rs.scopes && ${scopes}
                       order by rs.resource)`
