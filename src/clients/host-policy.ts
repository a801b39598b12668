import { domainToASCII } from 'node:url'

/**
 * The operator's allow and deny lists of hosts (CLIENT_METADATA_ALLOWED_HOSTS, …_DENIED_HOSTS): an
 * entry is a host name, matched exactly (`app.example`), or `*.` and a domain, matching every name
 * under it (`*.example.com` matches `a.example.com`, not `example.com`). An entry with a port
 * (`app.example:8443`) matches that port only; one without, any port. Both sides are compared
 * normalized (normalizeHostName), so `EVIL.example.` and `évil.example` name the hosts DNS does.
 */
export function hostMatches(pattern: string, host: string): boolean {
  const [patternName = '', patternPort] = splitPort(pattern)
  const [name = '', port] = splitPort(host)
  if (patternPort !== undefined && patternPort !== port) return false
  const wanted = normalizeHostName(patternName)
  const given = normalizeHostName(name)
  return wanted.startsWith('*.') ? given.endsWith(wanted.slice(1)) : given === wanted
}

/**
 * A host name as DNS compares it: IDNA to ASCII (punycode, which lower-cases), and one trailing dot
 * (the root, `evil.example.` is `evil.example`) removed. An IP literal or a name IDNA cannot convert
 * is only lower-cased: it can match no name a URL parser produces but itself.
 */
export function normalizeHostName(name: string): string {
  const lower = name.toLowerCase()
  const ascii = lower.startsWith('[') ? lower : domainToASCII(lower) || lower
  return ascii.endsWith('.') ? ascii.slice(0, -1) : ascii
}

function splitPort(host: string): [string, string | undefined] {
  const match = /^(.*?)(?::(\d+))?$/.exec(host)
  return [match?.[1] ?? host, match?.[2]]
}
