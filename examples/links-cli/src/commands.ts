/** `shorten`, `list`, `stats`, `whoami`: the links API's answers, printed for a person. */
import { CliFailure, describe, EXIT } from './http.js'
import { callApi, currentSession } from './session.js'
import type { Store } from './store.js'

interface Link {
  id: string
  slug: string
  short_url: string
  target_url: string
  tags: string[]
  clicks: number
}

function expectStatus(answer: { status: number }, status: number, what: string, detail: () => string) {
  if (answer.status !== status) throw new CliFailure(`${what} failed (${answer.status}): ${detail()}`)
}

export async function shorten(store: Store, url: string, options: { slug?: string; tags: string[] }) {
  const answer = await callApi(store, 'POST', '/api/links', {
    target_url: url,
    ...(options.slug ? { slug: options.slug } : {}),
    ...(options.tags.length > 0 ? { tags: options.tags } : {}),
  })
  if (answer.json?.error === 'slug_taken')
    throw new CliFailure(`The slug "${options.slug}" is taken; choose another with --slug.`)
  expectStatus(answer, 201, 'Shortening', () => describe(answer))
  const link = answer.json as Link
  return [link.short_url, `  → ${link.target_url}${link.tags.length ? `  [${link.tags.join(', ')}]` : ''}`]
}

export async function list(store: Store) {
  const lines: string[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) })
    const answer = await callApi(store, 'GET', `/api/links?${query}`)
    expectStatus(answer, 200, 'Listing', () => describe(answer))
    const page = answer.json as { links: Link[]; next_cursor: string | null }
    for (const link of page.links)
      lines.push(
        `${link.slug.padEnd(14)} ${String(link.clicks).padStart(6)} clicks  ${link.short_url} → ${link.target_url}${link.tags.length ? `  [${link.tags.join(', ')}]` : ''}`,
      )
    cursor = page.next_cursor
  } while (cursor)
  return lines.length > 0 ? lines : ['No links yet. Make one with: shorten URL']
}

/** The link with exactly this slug: the API finds links by id, so search its text and match. */
async function linkBySlug(store: Store, slug: string): Promise<Link> {
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ q: slug, limit: '100', ...(cursor ? { cursor } : {}) })
    const answer = await callApi(store, 'GET', `/api/links?${query}`)
    expectStatus(answer, 200, 'Finding the link', () => describe(answer))
    const page = answer.json as { links: Link[]; next_cursor: string | null }
    const found = page.links.find((l) => l.slug === slug)
    if (found) return found
    cursor = page.next_cursor
  } while (cursor)
  throw new CliFailure(`You have no link with the slug "${slug}".`)
}

export async function stats(store: Store, slug: string) {
  const link = await linkBySlug(store, slug)
  const answer = await callApi(store, 'GET', `/api/links/${encodeURIComponent(link.id)}/stats`)
  expectStatus(answer, 200, 'Statistics', () => describe(answer))
  const s = answer.json as {
    from: string
    to: string
    total_clicks: number
    clicks_in_range: number
    days: { date: string; clicks: number }[]
  }
  return [
    `${link.short_url} → ${link.target_url}`,
    `clicks: ${s.total_clicks} in total, ${s.clicks_in_range} from ${s.from} to ${s.to}`,
    ...s.days.filter((d) => d.clicks > 0).map((d) => `  ${d.date}  ${d.clicks}`),
  ]
}

export function whoami(store: Store) {
  const s = currentSession(store)
  const expiresIn = Math.round((s.access_token_expires_at - Date.now()) / 1000)
  return [
    `Signed in to ${s.api} through ${s.issuer}`,
    `client id: ${s.client_id}`,
    `scope:     ${s.scope}`,
    `resource:  ${s.resource}`,
    `access token ${expiresIn > 0 ? `valid for ${expiresIn} s more` : 'expired (refreshed on the next call)'}; refresh token ${s.refresh_token ? 'kept' : 'none'}`,
  ]
}

export { EXIT }
