import { z } from 'zod'
import { isoTime, ok, type Operations, problem } from '../openapi/describe.js'

export const accountAppsSchema = z.object({
  apps: z.array(
    z.object({
      client_id: z.string(),
      name: z.string(),
      scopes: z.array(z.object({ scope: z.string(), description: z.string() })),
      resources: z.array(z.object({ resource: z.string(), name: z.string() })).meta({
        description:
          'The APIs (RFC 8707 resource identifiers, with their registered names) the user consented to; empty: the service’s default audience.',
      }),
      description: z
        .string()
        .nullable()
        .meta({ description: 'What the operator wrote about the app (plain text).' }),
      homepage_url: z.string().nullable(),
      privacy_policy_url: z.string().nullable(),
      terms_url: z.string().nullable(),
      authorized_at: isoTime,
      last_used_at: isoTime.nullable(),
      standing: z.enum(['verified', 'vouched', 'unverified']).meta({
        description:
          'Who stands behind the app: verified (by the operator), vouched (by its host: a metadata document), unverified (it registered itself).',
      }),
      standing_label: z.string().meta({ description: 'The standing in words, as the page shows it.' }),
      host: z.string().meta({
        description:
          'Where the app is known from (its metadata document’s host, else where its redirect URIs send the answer); IDNs in Unicode, with the ASCII form when scripts mix.',
      }),
      connected: z.boolean().meta({
        description:
          'It holds a live token now. False: it is signed out, and may sign in again without asking until the user removes it (removing forgets the consent).',
      }),
      state: z.enum(['connected', 'signed_out']).meta({ description: 'connected, as a word.' }),
      on_another_device: z.boolean().meta({
        description: 'Allowed with a device code (RFC 8628): the application runs on another device.',
      }),
    }),
  ),
  csrf_token: z.string().meta({
    description: 'Send it back as the X-CSRF-Token header of DELETE /api/account/apps/{client_id}.',
  }),
})

const notSignedIn = problem('Not signed in.')

/** The JSON API of the connected-apps page, for the main site's front end (its pages are not API). */
export const connectedAppsApiOperations: Operations = {
  '/api/account/apps': {
    get: {
      operationId: 'listConnectedApps',
      summary: 'The signed-in user’s connected applications (for the main site’s front end).',
      security: [{ session: [] }],
      responses: {
        '200': ok('The applications and a CSRF token for DELETE.', accountAppsSchema),
        '401': notSignedIn,
      },
    },
  },
  '/api/account/apps/{client_id}': {
    delete: {
      operationId: 'revokeConnectedApp',
      summary: 'Revoke an application: its grant and every token it holds stop working at once.',
      security: [{ session: [] }],
      parameters: [
        { name: 'client_id', in: 'path', required: true, schema: { type: 'string' } },
        {
          name: 'X-CSRF-Token',
          in: 'header',
          required: true,
          description: 'The `csrf_token` of GET /api/account/apps.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '204': { description: 'Revoked.' },
        '401': notSignedIn,
        '403': problem('Missing or wrong X-CSRF-Token.'),
        '404': problem('No connected application with this client_id.'),
      },
    },
  },
}
