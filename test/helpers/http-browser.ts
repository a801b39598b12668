/** A browser over real HTTP: a cookie jar, and redirects followed by hand until they leave the server. */
export class HttpBrowser {
  private readonly cookies = new Map<string, string>()
  constructor(private readonly base: string) {}

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const res = await fetch(new URL(path, this.base), {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const [name, value] = pair!.split('=') as [string, string]
      if (value === '' || /expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
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

/** The value of a hidden input in a page. */
export const field = (body: string, name: string) =>
  new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(body)![1]!
