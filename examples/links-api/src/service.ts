import { defineService, serviceVerifier } from '../../shared/service.js'
import { buildLinksApp } from './app.js'
import { LinksConfigError, loadLinksConfig } from './config.js'
import { connectLinksDatabase } from './db/connect.js'
import { migrateLinksDatabase } from './db/migrator.js'

/** The links API's process (main.ts runs it, after tracing when asked). */
export const service = defineService({
  name: 'links-api',
  title: 'links API',
  loadConfig: loadLinksConfig,
  isConfigError: (err) => err instanceof LinksConfigError,
  connect: (config) =>
    connectLinksDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
    }),
  migrate: migrateLinksDatabase,
  // The MCP endpoint, when registered, verifies tokens of its own audience with its own feed.
  build: async (deps) => {
    const { mcp } = deps.config
    if (!mcp) {
      deps.logger.info({}, 'MCP endpoint off: LINKS_MCP_RESOURCE_SERVER_ID and _SECRET are not set')
      return buildLinksApp(deps)
    }
    const verifier = await serviceVerifier(deps.config, deps.logger, {
      resource: mcp.resource,
      credentials: mcp.resourceServer,
    })
    const app = await buildLinksApp({
      ...deps,
      // Session ids are signed with the endpoint's secret: every instance has it, no one else does.
      mcp: { verifier, sessionSecret: mcp.resourceServer.secret, allowedOrigins: mcp.allowedOrigins },
    })
    app.addHook('onClose', async () => verifier.close())
    deps.logger.info({ resource: mcp.resource }, 'MCP endpoint at /mcp')
    return app
  },
})
