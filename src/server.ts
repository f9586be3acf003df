import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config/index.js'
import { turnWriter } from './http/log-stream.js'
import { unsupportedNode } from './config/node-support.js'
import { configSecrets, redactSecrets } from './config/redact.js'
import type { LogStream } from './http/server-options.js'

// What a start-up failure's message must not show, once the configuration is known.
let secrets: string[] = []

// JSON lines for a log collector; readable lines for a person at a terminal.
async function logStream (): Promise<LogStream> {
  // Written asynchronously, the lines of a turn of the event loop together (log-stream.ts).
  if (process.stdout.isTTY !== true) return turnWriter(1)
  const { default: pretty } = await import('pino-pretty')
  // Synchronous, so that the last lines are written before process.exit.
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' })
}

async function main (): Promise<void> {
  const refusal = unsupportedNode()
  if (refusal !== undefined) throw new ConfigError(refusal)
  const config = loadConfig(process.env)
  secrets = configSecrets(config)
  for (const warning of config.shortTokens) process.stderr.write(`plant-store: WARNING: ${warning}\n`)
  if (config.generatedToken !== undefined) {
    process.stderr.write('plant-store: WARNING: no API_TOKENS or API_TOKENS_FILE set; this run accepts one random token:\n' +
      `plant-store:   ${config.generatedToken}\n`)
  }

  const app = await buildApp(config, { logStream: await logStream() })

  // On SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the store.
  closeWithGrace({ delay: 10_000, logger: app.log }, async ({ signal, err }) => {
    /* c8 ignore next -- an uncaught error cannot be provoked in the process from a test */
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    app.log.info({ signal }, 'shutting down')
    // A keep-alive connection that was busy when the server stopped accepting turns
    // idle once its last answer is out: close it then, not after KEEP_ALIVE_TIMEOUT.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100)
    await app.close()
    clearInterval(sweep)
  })

  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: Error) => {
  const message = error instanceof ConfigError ? error.message : `cannot start: ${error.message}`
  process.stderr.write(`plant-store: ${redactSecrets(message, secrets)}\n`)
  process.exit(1)
})
