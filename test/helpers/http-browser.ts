import { CookieJar, hiddenField } from './browser.js'

/** A browser over real HTTP: a cookie jar, and redirects followed by hand until they leave the server. */
export class HttpBrowser {
  private readonly jar = new CookieJar()
  constructor(private readonly base: string) {}

  /** The Cookie header it sends now (its session's values). */
  cookieHeader(): string {
    return this.jar.header()
  }

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const res = await fetch(new URL(path, this.base), {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: this.jar.header(),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    })
    this.jar.storeLines(res.headers.getSetCookie())
    return { res, body: await res.text() }
  }

  /**
   * A person's part of the authorization flow: open the authorize URL (a path on this server), sign
   * in, choose Allow. Returns the URL the browser is sent back to (redirect_uri?code&state&iss); the
   * sign-in session stays in this browser's jar. `onConsentPage` sees the consent page before Allow.
   */
  async signInAndAllow(
    authorizePath: string,
    email: string,
    password: string,
    onConsentPage: (html: string) => void = () => {},
  ): Promise<URL> {
    const signIn = await this.follow(await this.request(authorizePath))
    const consent = await this.follow(
      await this.request('/login', {
        method: 'POST',
        form: {
          email,
          password,
          csrf_token: hiddenField(signIn.body, 'csrf_token'),
          request: hiddenField(signIn.body, 'request'),
        },
      }),
    )
    onConsentPage(consent.body)
    const decision = await this.request('/oauth/authorize', {
      method: 'POST',
      form: {
        request: hiddenField(consent.body, 'request'),
        csrf_token: hiddenField(consent.body, 'csrf_token'),
        decision: 'allow',
      },
    })
    if (decision.res.status !== 303) throw new Error(`Allow answered ${decision.res.status}`)
    return new URL(decision.res.headers.get('location')!)
  }

  /** Follows redirects on our own server; returns the first answer that is a page or leaves it. */
  async follow(first: Awaited<ReturnType<HttpBrowser['request']>>) {
    let current = first
    while (current.res.status >= 300 && current.res.status < 400) {
      const location = current.res.headers.get('location')!
      if (!location.startsWith('/')) return { ...current, location }
      current = await this.request(location)
    }
    return { ...current, location: undefined }
  }
}
