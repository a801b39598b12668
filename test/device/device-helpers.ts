import { DEVICE_CODE_GRANT_TYPE } from '../../src/clients/grant-types.js'
import type { TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, REDIRECT_URI } from '../helpers/browser.js'

export { DEVICE_CODE_GRANT_TYPE }

/** A client allowed the device grant, and a user. */
export async function seedDevice(
  t: TestApp,
  grantTypes: string[] = ['refresh_token', DEVICE_CODE_GRANT_TYPE],
) {
  const client = await t.services.clients.createClient({
    name: 'Links CLI',
    redirect_uris: [REDIRECT_URI],
    grant_types: grantTypes as never,
    homepage_url: 'https://cli.example/',
  })
  const email = `user-${Math.random().toString(36).slice(2)}@example.com`
  const user = await t.services.users.createUser({ email, password: PASSWORD })
  return { client, user, email }
}

/** POST /api/oauth/device_authorization through app.inject. */
export function startDevice(t: TestApp, params: Record<string, string>, remoteAddress?: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/device_authorization',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(params).toString(),
    ...(remoteAddress ? { remoteAddress } : {}),
  })
}

/** One poll of the token endpoint. */
export function poll(t: TestApp, clientId: string, deviceCode: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: DEVICE_CODE_GRANT_TYPE,
      device_code: deviceCode,
      client_id: clientId,
    }).toString(),
  })
}

/** The person's side: type the code on /device, sign in, and answer the device consent. */
export async function answerOnDevicePage(
  t: TestApp,
  userCode: string,
  email: string,
  decision: 'allow' | 'deny',
  options: { confirm?: boolean; browser?: Browser } = {},
) {
  const browser = options.browser ?? new Browser(t.app)
  const form = await browser.get('/device')
  const entered = await browser.post('/device', {
    csrf_token: hiddenField(form.body, 'csrf_token'),
    user_code: userCode,
  })
  if (entered.statusCode !== 303) throw new Error(`code entry answered ${entered.statusCode}`)
  let location = entered.headers.location as string
  if (location.startsWith('/login')) {
    const login = await browser.get(location)
    const signedIn = await browser.post('/login', {
      email,
      password: PASSWORD,
      csrf_token: hiddenField(login.body, 'csrf_token'),
      next: hiddenField(login.body, 'next'),
    })
    location = signedIn.headers.location as string
  }
  const consent = await browser.get(location)
  if (consent.statusCode !== 200) throw new Error(`consent answered ${consent.statusCode}`)
  const answer = await browser.post('/device/confirm', {
    request: hiddenField(consent.body, 'request'),
    csrf_token: hiddenField(consent.body, 'csrf_token'),
    decision,
    ...(options.confirm === false ? {} : { started_here: 'yes' }),
  })
  return { consent, answer, browser }
}
