/**
 * The operator's allow and deny lists of hosts (CLIENT_METADATA_ALLOWED_HOSTS, …_DENIED_HOSTS): an
 * entry is a host name, matched exactly (`app.example`), or `*.` and a domain, matching every name
 * under it (`*.example.com` matches `a.example.com`, not `example.com`). An entry with a port
 * (`app.example:8443`) matches that port only; one without, any port.
 */
export function hostMatches(pattern: string, host: string): boolean {
  const [patternName = '', patternPort] = splitPort(pattern.toLowerCase())
  const [name = '', port] = splitPort(host.toLowerCase())
  if (patternPort !== undefined && patternPort !== port) return false
  return patternName.startsWith('*.') ? name.endsWith(patternName.slice(1)) : name === patternName
}

function splitPort(host: string): [string, string | undefined] {
  const match = /^(.*?)(?::(\d+))?$/.exec(host)
  return [match?.[1] ?? host, match?.[2]]
}
