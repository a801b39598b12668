import pg from 'pg'

/** What a LISTEN subscription reports. */
export interface NotificationHandlers {
  /** A notification on the channel (delivered when the notifying transaction commits). */
  notify(): void
  /** Listening started, or started again after a loss: anything may have happened meanwhile. */
  listening(): void
  /** The listening connection failed or was lost; notifications are missed until `listening`. */
  lost(err: unknown): void
}

/** Stops listening; safe to call twice. */
export type StopListening = () => Promise<void>

/** Subscribes to a notification channel of the database (PostgreSQL LISTEN). */
export type Listen = (channel: string, handlers: NotificationHandlers) => Promise<StopListening>

const RECONNECT_FIRST_MS = 100
const RECONNECT_MAX_MS = 5_000

/**
 * LISTEN on a PostgreSQL connection of its own (a pooled connection goes back to the pool, and its
 * LISTEN with it): ONE connection per process, whatever the number of channels and subscribers (the
 * revocation feed's, the signing keys'). Lost connections are replaced with backoff, from 100 ms up
 * to 5 s, and every channel is listened to again. A subscription resolves once the first attempt
 * has succeeded or failed, so that a caller that starts listening before serving knows where it
 * stands; a failed start keeps retrying in the background. The connection closes with the last
 * subscription.
 */
export function listenOnPostgres(url: string): Listen {
  const subscribers = new Map<string, Set<NotificationHandlers>>()
  let client: pg.Client | undefined
  /** The connection is up and listens to every channel in `subscribers`. */
  let ready = false
  let connecting: Promise<void> | undefined
  let delay = RECONNECT_FIRST_MS
  let retry: NodeJS.Timeout | undefined

  const everyone = () => [...subscribers.values()].flatMap((set) => [...set])

  const end = (c: pg.Client) => {
    c.removeAllListeners()
    c.on('error', () => {}) // a late error of a dead connection must not crash the process
    return c.end().catch(() => {})
  }

  const lose = (c: pg.Client, err: unknown) => {
    if (client !== c) return // already replaced
    client = undefined
    ready = false
    void end(c)
    if (subscribers.size === 0) return
    for (const handlers of everyone()) handlers.lost(err)
    retry = setTimeout(() => {
      retry = undefined
      void connect()
    }, delay)
    retry.unref()
    delay = Math.min(delay * 2, RECONNECT_MAX_MS)
  }

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const c = new pg.Client({
        connectionString: url,
        application_name: 'linkauth-listener',
        keepAlive: true,
        connectionTimeoutMillis: 5_000,
      })
      client = c
      c.on('error', (err) => lose(c, err))
      c.on('end', () => lose(c, new Error('the listening connection ended')))
      c.on('notification', (message) => {
        for (const handlers of [...(subscribers.get(message.channel) ?? [])]) handlers.notify()
      })
      try {
        await c.connect()
        for (const channel of subscribers.keys()) await c.query(`listen ${pg.escapeIdentifier(channel)}`)
      } catch (err) {
        lose(c, err)
        return
      }
      if (client !== c) {
        await end(c) // the last subscription stopped meanwhile
        return
      }
      ready = true
      delay = RECONNECT_FIRST_MS
      for (const handlers of everyone()) handlers.listening()
    })().finally(() => {
      connecting = undefined
    })
    return connecting
  }

  return async (channel, handlers) => {
    const known = subscribers.get(channel)
    const set = known ?? new Set<NotificationHandlers>()
    set.add(handlers)
    subscribers.set(channel, set)
    if (connecting) await connecting
    else if (!client && !retry) await connect()
    else if (ready && client) {
      const c = client
      try {
        if (!known) await c.query(`listen ${pg.escapeIdentifier(channel)}`)
        handlers.listening()
      } catch (err) {
        lose(c, err)
      }
    }
    let stopped = false
    return async () => {
      if (stopped) return
      stopped = true
      set.delete(handlers)
      if (set.size > 0) return
      subscribers.delete(channel)
      const c = client
      if (subscribers.size > 0) {
        if (ready && c) await c.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => {})
        return
      }
      clearTimeout(retry)
      retry = undefined
      client = undefined
      ready = false
      if (c) await end(c)
    }
  }
}
