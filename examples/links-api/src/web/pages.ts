import type { FastifyReply } from 'fastify'

const NOT_FOUND = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Link not found</title></head>
<body><main><h1>This short link does not exist</h1><p>Check the address: it may be mistyped, or the link was deleted.</p></main></body>
</html>
`

/** The page a visitor sees for a short URL that leads nowhere. */
export function notFoundPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
    .type('text/html; charset=utf-8')
    .send(NOT_FOUND)
}
