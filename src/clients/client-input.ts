import { z } from 'zod'
import { ALL_SCOPES, isKnownScope } from '../lib/scopes.js'
import { displayMetadataFields } from './display-metadata.js'
import { CLIENT_GRANT_TYPES } from './grant-types.js'
import { redirectUriProblem } from './redirect-uri.js'

/** The fields of a client the operator sends to register or change it (POST and PATCH /admin/clients). */
const knownScopes = z
  .array(
    z.string().refine(isKnownScope, { error: `unknown scope; known scopes: ${ALL_SCOPES.join(', ')}` }),
    'a list of scopes',
  )
  .min(1, 'at least one scope')

const clientFields = {
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  redirect_uris: z
    .array(
      z.string().superRefine((uri, ctx) => {
        const problem = redirectUriProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      }),
      'a list of redirect URIs',
    )
    .max(10, 'at most 10 redirect URIs')
    .refine((uris) => new Set(uris).size === uris.length, 'must not repeat a redirect URI'),
  scopes: knownScopes.optional(),
  /** RFC 6749 §3.3: what a request without `scope` gets, among `scopes`; left out: all of them. */
  default_scopes: knownScopes.optional(),
  /** RFC 7591 §2: the grant types it may use; the device grant (RFC 8628) only where named. */
  grant_types: z
    .array(
      z.enum(CLIENT_GRANT_TYPES, { error: `one of ${CLIENT_GRANT_TYPES.join(', ')}` }),
      'a list of grant types',
    )
    .min(1, 'at least one grant type')
    .optional(),
}

export const newClientSchema = z.object({
  ...clientFields,
  /** At least one unless grant_types leaves out the code grant (a device-only client): client-admin.ts checks. */
  redirect_uris: clientFields.redirect_uris.default([]),
  ...displayMetadataFields,
  /** RFC 9449: refuse this client's token requests without a DPoP proof (its tokens are always bound). */
  require_dpop: z.boolean('true or false').optional(),
  /** RFC 9126 §6: refuse this client's authorization requests unless pushed (POST /api/oauth/par). */
  require_pushed_authorization_requests: z.boolean('true or false').optional(),
})

export type NewClient = z.output<typeof newClientSchema>

/**
 * PATCH /admin/clients/:id: only the fields given change (null removes a metadata field). Redirect
 * URIs and scopes are checked as at registration. A field this API does not know is refused, so a
 * misspelt one cannot be silently ignored.
 */
export const clientUpdateSchema = z
  .strictObject({
    name: clientFields.name.optional(),
    redirect_uris: clientFields.redirect_uris.optional(),
    scopes: clientFields.scopes,
    /** null: back to all of its scopes. */
    default_scopes: knownScopes.nullable().optional(),
    grant_types: clientFields.grant_types,
    ...displayMetadataFields,
    require_pushed_authorization_requests: z.boolean('true or false').optional(),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), 'name at least one field to change')

export type ClientUpdate = z.output<typeof clientUpdateSchema>
