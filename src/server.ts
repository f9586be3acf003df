import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

async function main (): Promise<void> {
  const config = loadConfig(process.env)
  if (config.generatedToken !== undefined) {
    process.stderr.write('plant-store: WARNING: no API_TOKENS or API_TOKENS_FILE set; this run accepts one random token:\n' +
      `plant-store:   ${config.generatedToken}\n`)
  }

  const app = await buildApp(config)

  // On SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the
  // store; a second signal, or the delay running out, exits at once.
  closeWithGrace({ delay: 10_000, logger: app.log }, async ({ signal, err }) => {
    /* c8 ignore next -- an uncaught error cannot be provoked in the process from a test */
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    app.log.info({ signal }, 'shutting down')
    await app.close()
  })

  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: Error) => {
  const message = error instanceof ConfigError ? error.message : `cannot start: ${error.message}`
  process.stderr.write(`plant-store: ${message}\n`)
  process.exit(1)
})
