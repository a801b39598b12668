import { z } from 'zod'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import { ALL_SCOPES, isKnownScope } from '../lib/scopes.js'

/** What the admin API accepts about resource servers: the bodies of create, update and rotate. */

const scopeList = z
  .array(
    z.string().refine(isKnownScope, { error: `unknown scope; known scopes: ${ALL_SCOPES.join(', ')}` }),
    'a list of scopes',
  )
  .min(1, 'at least one scope')
  .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope')
const serverName = z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters')

/**
 * `resource` and `scopes` come together: an API with an identifier but no scopes could never get a
 * token (its scope is the granted scopes it serves), and scopes without an identifier would never be
 * used (a resource server without one gets default-audience tokens with every granted scope).
 */
export const newResourceServerSchema = z
  .object({
    name: serverName,
    resource: z
      .string('an absolute URI')
      .superRefine((uri, ctx) => {
        const problem = resourceIdentifierProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      })
      .optional()
      .meta({
        description:
          'The API\'s resource identifier (RFC 8707): an absolute https URI (http on a loopback host), no fragment, at most 2048 characters, unique. Tokens for it carry it as "aud".',
      }),
    scopes: scopeList.optional().meta({ description: 'The scopes this API serves; required with resource.' }),
  })
  .superRefine((input, ctx) => {
    if (input.resource !== undefined && input.scopes === undefined)
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'name the scopes this API serves' })
    if (input.scopes !== undefined && input.resource === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['resource'],
        message: 'scopes are served at a resource; name it',
      })
  })

export type NewResourceServer = z.output<typeof newResourceServerSchema>

/**
 * PATCH /admin/resource-servers/:id: name and scopes (the resource identifier is what tokens carry as
 * `aud`, so it never changes: register a new resource server for a new one). Unknown fields refused.
 */
export const resourceServerUpdateSchema = z
  .strictObject({
    name: serverName.optional(),
    scopes: scopeList.optional().meta({
      description:
        'The scopes this API serves (only for one with a resource). Tokens issued from now on carry the requested scopes it serves; tokens already issued keep theirs until they expire.',
    }),
  })
  .refine(
    (patch) => patch.name !== undefined || patch.scopes !== undefined,
    'name at least one field to change',
  )

export type ResourceServerUpdate = z.output<typeof resourceServerUpdateSchema>

/** The longest overlap a rotation may give the old secret: a week, enough for any deploy. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600
export const DEFAULT_SECRET_OVERLAP_SECONDS = 3600

export const secretRotationSchema = z.strictObject({
  overlap_seconds: z
    .number('a whole number of seconds')
    .int('a whole number of seconds')
    .min(0, 'at least 0 (0: the old secret stops at once)')
    .max(MAX_SECRET_OVERLAP_SECONDS, `at most ${MAX_SECRET_OVERLAP_SECONDS} (7 days)`)
    .optional()
    .meta({
      description: `How long the old secret keeps working, in seconds (default ${DEFAULT_SECRET_OVERLAP_SECONDS}; 0: it stops at once; at most ${MAX_SECRET_OVERLAP_SECONDS}).`,
    }),
})
