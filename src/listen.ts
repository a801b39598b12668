import type { FastifyInstance } from 'fastify'
import { ConfigError } from './config.js'

export interface Listener {
  port: number
  host: string
  /** The settings that chose port and host, named in the error a person reads. */
  portVariable: string
  hostVariable: string
}

/**
 * Listens, turning the failures a setting causes (a port taken, a privileged port, an address this
 * machine does not have) into a ConfigError naming the variable to change instead of a stack trace.
 */
export async function listenOn(app: FastifyInstance, listener: Listener): Promise<void> {
  const { port, host, portVariable, hostVariable } = listener
  try {
    await app.listen({ port, host })
  } catch (err) {
    switch ((err as NodeJS.ErrnoException).code) {
      case 'EADDRINUSE':
        throw new ConfigError(
          `${portVariable}: port ${port} on ${host} is already in use by another program; stop it or set ${portVariable} to a free port`,
        )
      case 'EACCES':
        throw new ConfigError(
          `${portVariable}: port ${port} needs privileges this process does not have; set ${portVariable} to a port above 1023`,
        )
      case 'EADDRNOTAVAIL':
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        throw new ConfigError(
          `${hostVariable}: ${host} is not an address of this machine; set ${hostVariable} to one (127.0.0.1, or 0.0.0.0 for every interface)`,
        )
      default:
        throw err
    }
  }
}
