import { StoreUnavailableError } from '../store/types.js'
import type { AttemptOutcome, ClaimedDelivery } from '../store/webhook-types.js'

/** What the sender needs of a logger; a pino or Fastify logger fits. */
export interface SenderLogger {
  debug (obj: object, msg: string): void
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

/** What the sender says: each attempt (debug; a 410 or a spent schedule louder), and its own troubles. */
export class SenderLog {
  private paused = false

  constructor (private readonly log: SenderLogger) {}

  attempt (delivery: ClaimedDelivery, outcome: AttemptOutcome): void {
    const fields = { delivery: delivery.id, endpoint: delivery.endpointId, attempt: delivery.attempts + 1, ...outcome }
    if (outcome.result === 'succeeded' || outcome.result === 'retry') this.log.debug(fields, 'webhook attempt')
    else if (outcome.result === 'gone') this.log.info(fields, 'webhook endpoint answered 410 Gone: disabled')
    else this.log.warn(fields, 'webhook delivery failed: its retry schedule is spent')
  }

  pruned (count: number): void {
    if (count > 0) this.log.info({ pruned: count }, 'pruned finished webhook deliveries')
  }

  disabled (count: number): void {
    if (count > 0) this.log.warn({ endpoints: count }, 'disabled webhook endpoints whose every attempt failed for WEBHOOK_DISABLE_AFTER')
  }

  /** The store did not take a call: paused (quietly) if it is unavailable, else a fault. */
  failed (error: Error, doing: string): void {
    if (!(error instanceof StoreUnavailableError)) {
      this.log.error({ err: error }, `webhook sender failed ${doing}`)
    } else if (!this.paused) {
      this.paused = true
      this.log.info({ reason: error.message }, 'webhook sender paused: the store is unavailable')
    }
  }

  /** The store took a call. */
  answered (): void {
    if (!this.paused) return
    this.paused = false
    this.log.info({}, 'webhook sender resumed')
  }
}
