import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'

async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`plant-store: ${error.message}\n`)
    process.exit(1)
  }

  if (config.generatedToken !== undefined) {
    process.stderr.write('plant-store: WARNING: no API_TOKENS or API_TOKENS_FILE set; this run accepts one random token:\n' +
      `plant-store:   ${config.generatedToken}\n`)
  }

  const app = await buildApp(config)

  // On SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the store.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })

  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: unknown) => {
  process.stderr.write(`plant-store: cannot start: ${(error as Error).message}\n`)
  process.exit(1)
})
