import type { FastifyReply } from 'fastify'

function page(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body><main><h1>${title}</h1><p>${message}</p></main></body>
</html>
`
}

const NOT_FOUND = page(
  'This short link does not exist',
  'Check the address: it may be mistyped, or the link was deleted.',
)
const GONE = page(
  'This short link has ended',
  'Its owner archived it, so it no longer leads anywhere. The shop may still be worth a visit.',
)
const UNAVAILABLE = page('Short links are unavailable for a moment', 'Please try again in a few seconds.')
const FAILED = page('Something went wrong on our side', 'Please try again later.')

/**
 * The page a visitor following a short URL sees when it leads nowhere (404), was archived by its
 * owner (410), or we fail (5xx).
 */
export function visitorPage(reply: FastifyReply, status: number): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
    .type('text/html; charset=utf-8')
    .send(status === 404 ? NOT_FOUND : status === 410 ? GONE : status === 503 ? UNAVAILABLE : FAILED)
}

export const notFoundPage = (reply: FastifyReply) => visitorPage(reply, 404)
