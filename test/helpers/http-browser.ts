import { CookieJar } from './browser.js'

/** A browser over real HTTP: a cookie jar, and redirects followed by hand until they leave the server. */
export class HttpBrowser {
  private readonly jar = new CookieJar()
  constructor(private readonly base: string) {}

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
