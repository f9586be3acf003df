/** What a store needs of a logger; a pino or Fastify logger fits. */
export interface StoreLogger {
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
}

export interface Outage {
  /** The store failed to answer: logged when an outage starts, not at every failure. */
  down (reason: string, code?: string): void
  /** The store answered: logged when an outage ends. */
  up (): void
}

/** Tracks whether a store answers, so an outage is logged once when it starts and once when it ends. */
export function trackOutage (log: StoreLogger, store: string): Outage {
  let available = true
  return {
    down (reason, code) {
      if (!available) return
      available = false
      log.warn({ reason, code }, `${store} is unavailable: requests get 503 until it answers again`)
    },
    up () {
      if (available) return
      available = true
      log.info({}, `${store} answers again`)
    }
  }
}

const ignore = (): void => {}
export const SILENT: StoreLogger = { info: ignore, warn: ignore }
