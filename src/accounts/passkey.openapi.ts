import { z } from 'zod'
import {
  badInput,
  idParameter,
  isoTime,
  noAdminToken,
  ok,
  type Operations,
  problem,
  pathParameter,
} from '../openapi/describe.js'

export const adminPasskeySchema = z.object({
  id: z.string(),
  name: z.string(),
  backup_eligible: z.boolean().meta({ description: 'A synced (multi-device) passkey (WebAuthn BE flag).' }),
  backed_up: z.boolean().meta({ description: 'Backed up when last seen (WebAuthn BS flag).' }),
  created_at: isoTime,
  last_used_at: isoTime.nullable(),
})
export const adminPasskeyListSchema = z.object({
  passkeys: z.array(adminPasskeySchema),
  password_sign_in: z.boolean().meta({ description: 'False when the user signs in with passkeys only.' }),
})

/** WebAuthn options as navigator.credentials wants them, base64url for binary (WebAuthn L3 §5.4, §5.5). */
const webauthnOptions = z.record(z.string(), z.unknown()).meta({
  description:
    'PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON (WebAuthn L3).',
})
const csrfHeader = (description: string) => ({
  name: 'X-CSRF-Token',
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
})
const passkeysOff = problem('Passkeys are turned off on this server (PASSKEYS=off).')
const expired = problem('No sign-in page cookie, or a wrong X-CSRF-Token.')

/** The options the sign-in and account pages' script asks for (pages, not an API for applications). */
export const passkeyPageOperations: Operations = {
  '/api/passkeys/sign-in-options': {
    post: {
      operationId: 'passkeySignInOptions',
      summary: 'A sign-in challenge for the sign-in page (bound to its pre-session cookie, 5 minutes, once).',
      security: [],
      parameters: [csrfHeader('The sign-in form’s csrf_token.')],
      responses: {
        '200': ok('Options for navigator.credentials.get.', webauthnOptions),
        '403': expired,
        '404': passkeysOff,
      },
    },
  },
  '/api/passkeys/reset-options': {
    post: {
      operationId: 'passkeyResetOptions',
      summary:
        "A registration challenge for a passwordless account's reset-link page (bound to the link and the page's pre-session cookie, 5 minutes, once).",
      security: [],
      parameters: [csrfHeader('The reset page’s csrf_token.')],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['token'],
              properties: { token: { type: 'string', description: 'The reset link’s token.' } },
            },
          },
        },
      },
      responses: {
        '200': ok('Options for navigator.credentials.create.', webauthnOptions),
        '403': expired,
        '404': problem(
          'The link is unknown, used or expired, is not a passwordless account’s, or passkeys are off.',
        ),
      },
    },
  },
  '/api/account/passkeys/options': {
    post: {
      operationId: 'passkeyRegistrationOptions',
      summary: 'A registration challenge for the signed-in user (needs a fresh sign-in or check).',
      security: [{ session: [] }],
      parameters: [csrfHeader('The passkeys page’s csrf_token.')],
      responses: {
        '200': ok('Options for navigator.credentials.create.', webauthnOptions),
        '403': problem('Not signed in, a wrong X-CSRF-Token, or no fresh check in the last 5 minutes.'),
        '404': passkeysOff,
      },
    },
  },
  '/api/account/passkeys/confirm-options': {
    post: {
      operationId: 'passkeyConfirmOptions',
      summary: 'A challenge to confirm it is the signed-in user with one of their passkeys.',
      security: [{ session: [] }],
      parameters: [csrfHeader('The passkeys page’s csrf_token.')],
      responses: {
        '200': ok('Options for navigator.credentials.get (the user’s passkeys).', webauthnOptions),
        '403': problem('Not signed in, or a wrong X-CSRF-Token.'),
        '404': passkeysOff,
      },
    },
  },
}

export const passkeyAdminOperations: Operations = {
  '/admin/users/{id}/passkeys': {
    get: {
      operationId: 'listUserPasskeys',
      summary: "A user's passkeys (no key material) and whether their password signs in.",
      parameters: [idParameter('The user id (UUID).')],
      responses: {
        '200': ok('The passkeys.', adminPasskeyListSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such user.'),
      },
    },
  },
  '/admin/users/{id}/passkeys/{passkey_id}': {
    delete: {
      operationId: 'removeUserPasskey',
      summary: "Remove one of a user's passkeys (a lost device); it signs in no more.",
      parameters: [idParameter('The user id (UUID).'), pathParameter('passkey_id', 'The passkey id.')],
      responses: {
        '204': { description: 'Removed.' },
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such passkey of this user.'),
      },
    },
  },
}
