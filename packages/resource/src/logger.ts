/** The logger the verifier writes to: pino's shape, so a Fastify app can pass `app.log`. */
export interface ResourceLogger {
  info(o: object, msg?: string): void
  warn(o: object, msg?: string): void
  error(o: object, msg?: string): void
}

/** Without a logger, mode switches and feed failures still reach stderr: they matter to an operator. */
export const consoleLogger: ResourceLogger = {
  info: (o, msg) => console.info(JSON.stringify({ level: 'info', msg, ...o })),
  warn: (o, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...o })),
  error: (o, msg) => console.error(JSON.stringify({ level: 'error', msg, ...o })),
}
