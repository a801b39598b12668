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
 * LISTEN with it). Lost connections are replaced with backoff, from 100 ms up to 5 s. Resolves once
 * the first attempt has succeeded or failed, so that a caller that starts listening before serving
 * knows where it stands; a failed start keeps retrying in the background.
 */
export function listenOnPostgres(url: string): Listen {
  return async (channel, handlers) => {
    let client: pg.Client | undefined
    let stopped = false
    let delay = RECONNECT_FIRST_MS
    let retry: NodeJS.Timeout | undefined

    const lose = (c: pg.Client, err: unknown) => {
      if (client !== c) return // already replaced
      client = undefined
      c.removeAllListeners()
      c.on('error', () => {}) // a late error of a dead connection must not crash the process
      c.end().catch(() => {})
      if (stopped) return
      handlers.lost(err)
      retry = setTimeout(() => void connect(), delay)
      retry.unref()
      delay = Math.min(delay * 2, RECONNECT_MAX_MS)
    }

    const connect = async (): Promise<void> => {
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
        if (message.channel === channel) handlers.notify()
      })
      try {
        await c.connect()
        await c.query(`listen ${pg.escapeIdentifier(channel)}`)
      } catch (err) {
        lose(c, err)
        return
      }
      if (stopped || client !== c) return
      delay = RECONNECT_FIRST_MS
      handlers.listening()
    }

    await connect()
    return async () => {
      stopped = true
      clearTimeout(retry)
      const c = client
      client = undefined
      if (c) {
        c.removeAllListeners()
        c.on('error', () => {})
        await c.end().catch(() => {})
      }
    }
  }
}
