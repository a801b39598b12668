import { z } from 'zod'
import {
  badInput,
  idParameter,
  isoTime,
  jsonBody,
  noAdminToken,
  ok,
  type Operations,
  problem,
} from '../openapi/describe.js'
import { blockClientSchema } from './blocked-client.routes.js'
import { clientUpdateSchema, newClientSchema } from './client.service.js'

export const clientSchema = z.object({
  client_id: z.string(),
  name: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()).meta({ description: 'The most it may be granted.' }),
  default_scopes: z.array(z.string()).meta({
    description:
      'What an authorization request without `scope` gets (RFC 6749 §3.3), among `scopes`: the operator’s choice, else all of them; for a self-registered client, the scope it registered or its document states.',
  }),
  homepage_url: z.string().nullable(),
  privacy_policy_url: z.string().nullable(),
  terms_url: z.string().nullable(),
  description: z.string().nullable().meta({ description: 'Plain text users see on the consent page.' }),
  created_at: isoTime,
  disabled_at: isoTime.nullable(),
  require_dpop: z.boolean().meta({
    description:
      'RFC 9449: token requests without a DPoP proof are refused (invalid_dpop_proof), so every token of this client is bound to a key.',
  }),
  require_pushed_authorization_requests: z.boolean().meta({
    description:
      'RFC 9126 §6: authorization requests must be pushed (POST /api/oauth/par); a plain one is answered invalid_request at the redirect URI.',
  }),
  grant_types: z.array(z.string()).meta({
    description:
      'RFC 7591 §2: the grant types the client may use; urn:ietf:params:oauth:grant-type:device_code (RFC 8628) only where named.',
  }),
  kind: z.enum(['registered', 'metadata_document', 'dynamic']).meta({
    description:
      'Who brought the client: the operator, a Client ID Metadata Document (its client_id is the document URL), or a dynamic registration (RFC 7591).',
  }),
  standing: z.enum(['verified', 'vouched', 'unverified']).meta({
    description:
      "Who stands behind it, as every page shows: verified (registered by the operator, or verified), vouched (a metadata document: its host vouches), unverified (self-registered, or the operator took its standing away). The operator's decision wins over the kind.",
  }),
  standing_override: z.enum(['verified', 'unverified']).nullable().meta({
    description: "The operator's decision (verify, unverify); null: the standing follows from the kind.",
  }),
  host: z.string().meta({
    description:
      "The host shown beside its name: a metadata document's client_id host, else its redirect URIs' hosts (IDNs in Unicode, with the ASCII form when scripts mix).",
  }),
})
export const updatedClientSchema = clientSchema.extend({
  narrowed: z
    .object({
      grants_revoked: z.number().int().meta({ description: 'Grants left with no scope, revoked.' }),
      grants_narrowed: z.number().int().meta({ description: 'Grants that keep some of their scopes.' }),
      refresh_families_revoked: z.number().int().meta({
        description:
          'Refresh-token families that held a removed scope: their access tokens are refused from now on.',
      }),
      refresh_families_continued: z.number().int().meta({
        description: 'Of those, the ones whose refresh token keeps working with the remaining scopes.',
      }),
      codes_expired: z.number().int().meta({ description: 'Unredeemed authorization codes expired.' }),
    })
    .nullable()
    .meta({
      description: 'What removing scopes or redirect URIs did to live grants; null when nothing was removed.',
    }),
})
export const clientListSchema = z.object({ clients: z.array(clientSchema) })

const clientId = idParameter('The client_id.')
const noSuchClient = problem('No such client.')

export const clientAdminOperations: Operations = {
  '/admin/clients': {
    post: {
      operationId: 'createClient',
      summary: 'Register a client application.',
      requestBody: jsonBody(newClientSchema),
      responses: { '201': ok('The client.', clientSchema), '400': badInput, '401': noAdminToken },
    },
    get: {
      operationId: 'listClients',
      summary: 'List every client, disabled ones included.',
      responses: {
        '200': ok('Every client, disabled ones included.', clientListSchema),
        '401': noAdminToken,
      },
    },
  },
  '/admin/clients/{id}': {
    get: {
      operationId: 'getClient',
      summary: 'Show one client.',
      parameters: [clientId],
      responses: { '200': ok('The client.', clientSchema), '401': noAdminToken, '404': noSuchClient },
    },
    patch: {
      operationId: 'updateClient',
      summary:
        'Change a client: only the fields given. Removing a scope revokes what was granted with it (announced on the revocation feed).',
      parameters: [clientId],
      requestBody: jsonBody(clientUpdateSchema),
      responses: {
        '200': ok('The client as it now is, and what narrowing it did.', updatedClientSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
    delete: {
      operationId: 'disableClient',
      summary: 'Disable a client and revoke all its grants and tokens.',
      parameters: [clientId],
      responses: {
        '200': ok('The client, with disabled_at set.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },
  '/admin/clients/{id}/enable': {
    post: {
      operationId: 'enableClient',
      summary: 'Re-enable a disabled client. Grants revoked when it was disabled stay revoked.',
      parameters: [clientId],
      responses: {
        '200': ok('The client, with disabled_at null.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },

  '/admin/clients/{id}/verify': {
    post: {
      operationId: 'verifyClient',
      summary:
        'Verify an application that came in by itself (or give back a standing taken away): every page, token and audit entry shows it as verified. Audited (client.standing_changed).',
      parameters: [clientId],
      responses: {
        '200': ok('The client, with standing verified.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },
  '/admin/clients/{id}/unverify': {
    post: {
      operationId: 'unverifyClient',
      summary:
        "Take an application's standing away: it is shown, and treated, as unverified whatever brought it. Audited.",
      parameters: [clientId],
      responses: {
        '200': ok('The client, with standing unverified.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },
  '/admin/clients/{id}/standing': {
    delete: {
      operationId: 'resetClientStanding',
      summary: "Forget the operator's decision: the standing follows from how the client came in. Audited.",
      parameters: [clientId],
      responses: {
        '200': ok('The client, with standing_override null.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },
}

const blockedSchema = z.object({ client_id: z.string(), blocked: z.literal(true) })
const blockedListSchema = z.object({
  blocked: z.array(z.object({ client_id: z.string(), reason: z.string().nullable(), blocked_at: isoTime })),
})

export const blockedClientAdminOperations: Operations = {
  '/admin/blocked-clients': {
    post: {
      operationId: 'blockClientId',
      summary:
        'Block a client_id URL (a Client ID Metadata Document), seen or not: its grants are revoked and no later document unblocks it.',
      requestBody: jsonBody(blockClientSchema),
      responses: {
        '201': ok('Blocked now.', blockedSchema),
        '200': ok('It was blocked already.', blockedSchema),
        '400': badInput,
        '401': noAdminToken,
      },
    },
    get: {
      operationId: 'listBlockedClientIds',
      summary: 'The blocked client_id URLs.',
      responses: { '200': ok('The block list, oldest first.', blockedListSchema), '401': noAdminToken },
    },
    delete: {
      operationId: 'unblockClientId',
      summary: 'Take a client_id URL off the block list (its client stays disabled until enabled).',
      parameters: [
        {
          name: 'client_id',
          in: 'query',
          required: true,
          description: 'The blocked client_id URL.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '204': { description: 'Unblocked.' },
        '400': badInput,
        '401': noAdminToken,
        '404': problem('Not blocked.'),
      },
    },
  },
}
