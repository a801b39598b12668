/**
 * `login`: the device authorization grant (RFC 8628). Ask for a device code, show the person the
 * user code and where to enter it, poll the token endpoint at the interval the server gave (5 s more
 * after each slow_down, §3.5) until they approve, deny, or the code expires; keep the tokens.
 */
import { DEVICE_CODE_GRANT_TYPE, discover, type Discovered } from './discovery.js'
import { type Answer, CliFailure, describe, EXIT, oauthError, request } from './http.js'
import { clientFor, register } from './registration.js'
import type { ClientFile, SessionFile, Store } from './store.js'

export interface LoginIo {
  say: (line: string) => void
  /** Waits this long (tests move a clock instead of waiting). */
  sleep: (ms: number) => Promise<void>
}

interface DeviceStart {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete?: string
  expires_in: number
  interval?: number
}

async function startDevice(found: Discovered, client: ClientFile): Promise<Answer> {
  return request(found.server.device_authorization_endpoint!, {
    form: {
      client_id: client.client_id,
      ...(found.scopes.length > 0 ? { scope: found.scopes.join(' ') } : {}),
      resource: found.resource,
    },
  })
}

export async function login(
  store: Store,
  options: { api: string; clientId: string | undefined },
  io: LoginIo,
): Promise<SessionFile> {
  const found = await discover(options.api)
  let client = await clientFor(store, found, options.clientId, io.say)
  let answer = await startDevice(found, client)
  // A registration unused for long is removed by the server's housekeeping: register again, once.
  if (oauthError(answer) === 'invalid_client' && client.registered_by === 'dynamic') {
    client = await register(store, found, io.say)
    answer = await startDevice(found, client)
  }
  if (answer.status !== 200)
    throw new CliFailure(`${found.server.issuer} refused to start the sign-in: ${describe(answer)}`)
  const started = answer.json as DeviceStart

  io.say(`To sign in, open ${started.verification_uri}`)
  io.say(`and enter the code:  ${started.user_code}`)
  if (started.verification_uri_complete)
    io.say(`(or open ${started.verification_uri_complete}, which carries the code)`)
  io.say(
    `Check that the page shows this code. Waiting for you to approve (the code expires in ${Math.round(started.expires_in / 60)} minutes) …`,
  )

  let interval = Math.max(1, started.interval ?? 5)
  const deadline = Date.now() + started.expires_in * 1000
  for (;;) {
    await io.sleep(interval * 1000)
    const polled = await request(found.server.token_endpoint, {
      form: {
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: started.device_code,
        client_id: client.client_id,
      },
    })
    if (polled.status === 200) {
      const session = sessionOf(found, client.client_id, polled)
      store.writeSession(session)
      io.say(`Signed in to ${found.resourceName ?? found.api} (${session.scope}).`)
      io.say(`Tokens kept in ${store.path('session.json')} (mode 0600).`)
      return session
    }
    const error = oauthError(polled)
    if (error === 'authorization_pending') {
      if (Date.now() > deadline) throw expired()
      continue
    }
    if (error === 'slow_down') {
      interval += 5
      continue
    }
    if (error === 'access_denied')
      throw new CliFailure('The sign-in was denied on the approval page. Nothing was kept.', EXIT.DENIED)
    if (error === 'expired_token') throw expired()
    throw new CliFailure(`The token endpoint refused: ${describe(polled)}`)
  }
}

const expired = () =>
  new CliFailure('The code expired before it was approved. Run login again for a new code.', EXIT.EXPIRED)

/** The session a token answer starts (a device grant or a refresh). */
export function sessionOf(
  found: Pick<Discovered, 'api' | 'resource' | 'server'>,
  clientId: string,
  answer: Answer,
  previous?: SessionFile,
): SessionFile {
  const body = answer.json as {
    access_token: string
    expires_in?: number
    refresh_token?: string
    scope?: string
  }
  return {
    api: found.api,
    issuer: found.server.issuer,
    resource: found.resource,
    client_id: clientId,
    token_endpoint: found.server.token_endpoint,
    ...(found.server.revocation_endpoint ? { revocation_endpoint: found.server.revocation_endpoint } : {}),
    scope: body.scope ?? previous?.scope ?? '',
    access_token: body.access_token,
    access_token_expires_at: Date.now() + (body.expires_in ?? 300) * 1000,
    // RFC 6749 §6: the server may keep the old refresh token; ours rotates it.
    ...((body.refresh_token ?? previous?.refresh_token)
      ? { refresh_token: body.refresh_token ?? previous?.refresh_token }
      : {}),
  }
}
