import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Agent } from 'undici'
import { performance } from 'node:perf_hooks'
import type { AttemptOutcome, ClaimedDelivery, WebhookStore } from '../store/webhook-types.js'
import { attempt, createWebhookAgent, type AttemptOptions } from './deliver.js'
import { Lanes } from './lanes.js'
import { Pacer } from './pacer.js'
import { Pressure } from './pressure.js'
import { SenderLog, type SenderLogger } from './sender-log.js'
import type { WebhookObserver } from './observer.js'

export type { SenderLogger } from './sender-log.js'

export interface SenderOptions extends AttemptOptions {
  store: WebhookStore
  log: SenderLogger
  /** How long a finished delivery is kept (WEBHOOK_RETENTION), in ms. */
  retention: number
  /** How long an endpoint may fail every attempt before it is disabled (WEBHOOK_DISABLE_AFTER), in ms. */
  disableAfter?: number
  /** Attempts in flight to one endpoint, so that a slow one holds up only itself. */
  perEndpoint?: number
  /** Attempts in flight in all. */
  total?: number
  /** How often due deliveries are looked for without a wake-up (retries, other instances), in ms. */
  pollInterval?: number
  /** How often succeeded deliveries older than `retention` are deleted, in ms. */
  pruneInterval?: number
  /** How long stop() lets attempts in flight finish before it cuts them off, in ms. */
  grace?: number
  /** Hears of every attempt (metrics, traces), and may add headers to its request. */
  observer?: WebhookObserver
  /**
   * True while the process is saturated: then one attempt at a time, so that the API's requests keep the
   * CPU.
   */
  busy?: () => boolean
  /** Sets the timers that wake the sender for a retry or after a pause. Default: setTimeout. */
  setTimer?: (wake: () => void, ms: number) => NodeJS.Timeout
  /** True while plant writes are being made. */
  writing?: () => boolean
  /** See `writing`. */
  share?: number
}

// Deliveries claimed at once.
const BATCH = 16
// A lease lasts an attempt and this margin, and is renewed while its delivery is held.
export const LEASE_MARGIN = 5000
const RENEW = LEASE_MARGIN / 2
// The sender's store work's share of the time by default.
const SHARE = 0.2
// How long, in ms, after a claim that left out full endpoints and found nothing, before the next such claim.
const BARREN_PAUSE = 100
// Deliveries one expansion step adds at most.
export const EXPAND_STEP = 500

/** The sender: expands each change's event into its deliveries, a bounded step at a time. */
export class WebhookSender {
  /** This process's name on its leases: a restarted process is another owner. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly store: WebhookStore
  private readonly log: SenderLog
  private readonly options: Required<Omit<SenderOptions, 'store' | 'log' | 'observer' | 'busy' | 'setTimer' | 'share' | 'resolve' | 'writing'>>
  private readonly saturated?: () => boolean
  private readonly setTimer: (wake: () => void, ms: number) => NodeJS.Timeout
  private pressure?: Pressure
  private readonly observer?: WebhookObserver
  private readonly agent: Agent
  private readonly leaseMs: number
  private readonly lanes: Lanes
  private readonly pacer: Pacer
  /** Deliveries claimed and not yet recorded nor given back: their leases are renewed. */
  private readonly held = new Set<string>()
  private renewing?: Promise<void>
  private sweeping?: Promise<void>
  private finishing: Array<{ id: string, outcome: AttemptOutcome, done: (error?: Error) => void }> = []
  private readonly inFlight = new Set<Promise<void>>()
  private claiming = false
  /** The last claim, the expansion and the prune under way: stop() waits for them before it gives leases back. */
  private claimed?: Promise<void>
  private expanding?: Promise<void>
  private expandAgain = false
  private pruning?: Promise<void>
  private again = false
  private barrenUntil = 0
  private barrenWake = false
  private started = false
  private stopped = false
  /** stop() cut off the attempts still in flight: their leases are given back, not finished. */
  private cut = false
  private timers: NodeJS.Timeout[] = []
  private readonly retries = new Set<NodeJS.Timeout>()
  private unlisten?: () => void

  constructor (options: SenderOptions) {
    const { store, log, observer, busy, setTimer = setTimeout, share = SHARE, writing = () => false, resolve, ...rest } = options
    this.store = store
    this.saturated = busy
    this.setTimer = setTimer
    this.log = new SenderLog(log)
    this.observer = observer
    this.options = { perEndpoint: 4, total: 64, pollInterval: 1000, pruneInterval: 3_600_000, grace: 5000, disableAfter: 432_000_000, ...rest }
    this.agent = createWebhookAgent({ ...this.options, resolve })
    this.lanes = new Lanes(this.options.perEndpoint, this.options.total)
    this.pacer = new Pacer(share, writing)
    this.leaseMs = this.options.timeout + LEASE_MARGIN
  }

  /** Begins; once only. */
  start (): void {
    if (this.started || this.stopped) return
    this.started = true
    this.unlisten = this.store.onDeliveries(() => this.wake())
    // The event loop's own measure, unless told otherwise; it wakes the sender when the load eases.
    if (this.saturated === undefined) this.pressure = new Pressure(() => this.wake())
    this.timers = [
      setInterval(() => this.wake(), this.options.pollInterval),
      setInterval(() => this.prune(), this.options.pruneInterval),
      setInterval(() => this.renew(), RENEW),
      // Endpoints are disabled at most a minute (or WEBHOOK_DISABLE_AFTER, when shorter) late.
      setInterval(() => this.disableFailing(), Math.min(this.options.disableAfter, 60_000))
    ]
    this.prune()
    this.wake()
  }

  /** Expands the events committed, then looks for due deliveries. */
  wake (): void {
    if (!this.started || this.stopped) return
    if (this.expanding === undefined) {
      this.expanding = this.expandSteps().finally(() => {
        this.expanding = undefined
        if (this.expandAgain) this.wake()
      })
      return
    }
    this.expandAgain = true
    this.claimNow()
  }

  private claimNow (): void {
    if (!this.started || this.stopped) return
    if (this.claiming) {
      this.again = true
      return
    }
    this.claimed = this.claim()
  }

  // Claims until a claim comes back short or there is no room.
  private async claim (): Promise<void> {
    this.claiming = true
    try {
      do {
        this.again = false
        // Saturated: one attempt in flight at most, the rest once the load eases (Pressure wakes the sender).
        await this.pacer.turn()
        if (this.stopped) break
        const room = Math.min(this.busy() ? 1 - this.lanes.running : this.lanes.room(), BATCH)
        if (room <= 0) break
        const exclude = this.lanes.full()
        if (exclude.length > 0 && Date.now() < this.barrenUntil) {
          // A claim that leaves out full endpoints reads past their whole due backlog.
          if (!this.barrenWake) {
            this.barrenWake = true
            this.wakeBy(this.barrenUntil)
          }
          break
        }
        const claimed = await this.pacer.run(() => this.store.claim(this.owner, room, this.leaseMs, { exclude }))
        this.log.answered()
        for (const delivery of claimed) this.held.add(delivery.id)
        if (exclude.length > 0 && claimed.length === 0) {
          this.barrenUntil = Date.now() + BARREN_PAUSE
          this.barrenWake = false
        }
        let waiting = false
        for (const delivery of claimed) {
          if (!this.stopped && this.lanes.admit(delivery)) this.begin(delivery)
          else waiting = true
        }
        // A full batch that could all start: more may be due.
        if (claimed.length === room && !waiting) this.again = true
      } while (this.again && !this.stopped)
    } catch (error) {
      this.log.failed(error as Error, 'claiming deliveries')
    }
    this.claiming = false
  }

  // Steps one after another, each a transaction of its own, with the event loop's other work between them.
  private async expandSteps (): Promise<void> {
    let first = true
    try {
      do {
        this.expandAgain = false
        const { deliveries, more } = await this.pacer.run(() => this.store.expand(EXPAND_STEP))
        this.log.answered()
        if (first || deliveries > 0) this.claimNow()
        first = false
        if (more) {
          this.expandAgain = true
          await new Promise((resolve) => setImmediate(resolve))
        }
      } while (this.expandAgain && !this.stopped)
    } catch (error) {
      this.log.failed(error as Error, 'expanding events')
      // Due deliveries (retries) go on, whatever became of the expansion.
      this.claimNow()
    }
  }

  private busy (): boolean {
    return this.saturated?.() ?? this.pressure?.high === true
  }

  private begin (delivery: ClaimedDelivery): void {
    const run = this.deliver(delivery).finally(() => { this.inFlight.delete(run) })
    this.inFlight.add(run)
  }

  // The endpoint's lane is free once the attempt has its outcome.
  private endAttempt (delivery: ClaimedDelivery): void {
    const next = this.lanes.end(delivery.endpointId)
    if (next !== undefined) this.begin(next)
    if (next === undefined || this.lanes.queued(delivery.endpointId) === this.lanes.perEndpoint - 1) this.claimNow()
  }

  private async deliver (delivery: ClaimedDelivery): Promise<void> {
    const watch = this.observer?.attempt(delivery)
    const outcome = await attempt(this.agent, delivery, this.options, watch?.headers)
    watch?.end(outcome)
    this.endAttempt(delivery)
    if (this.cut) return
    this.log.attempt(delivery, outcome)
    try {
      await this.record(delivery.id, outcome)
      this.log.answered()
    } catch (error) {
      // The lease runs out and the delivery is tried again, with the same webhook-id.
      this.log.failed(error as Error, 'recording an attempt')
      return
    } finally {
      this.held.delete(delivery.id)
    }
    if (outcome.result === 'retry') this.wakeBy(outcome.at.getTime())
  }

  // The outcomes of one turn go to the store together.
  private async record (id: string, outcome: AttemptOutcome): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      if (this.finishing.push({ id, outcome, done: (error) => error === undefined ? resolve() : reject(error) }) > 1) return
      setImmediate(() => {
        const batch = this.finishing
        this.finishing = []
        const start = performance.now()
        Promise.all(batch.map(({ id, outcome, done }) => this.store.finish(this.owner, id, outcome).then(() => done(), done)))
          .finally(() => this.pacer.charge(performance.now() - start))
      })
    })
  }

  private disableFailing (): void {
    this.sweeping ??= this.store.disableFailing(new Date(Date.now() - this.options.disableAfter))
      .then((count) => this.log.disabled(count), (error: Error) => this.log.failed(error, 'disabling failing endpoints'))
      .finally(() => { this.sweeping = undefined })
  }

  // Renews the leases of the deliveries held, so that only a crashed instance's lapse.
  private renew (): void {
    if (this.renewing !== undefined || this.held.size === 0) return
    this.renewing = this.store.renew(this.owner, [...this.held], this.leaseMs)
      .then(() => this.log.answered(), (error: Error) => this.log.failed(error, 'renewing its leases'))
      .finally(() => { this.renewing = undefined })
  }

  // A retry due before the next poll gets a wake-up of its own; a later one, the poll.
  private wakeBy (at: number): void {
    const delay = at - Date.now()
    if (this.stopped || delay >= this.options.pollInterval) return
    // A retry already due (its outcome took long to record) wakes at once.
    const timer = this.setTimer(() => {
      this.retries.delete(timer)
      // Node's timers keep a clock of their own, not Date.now()'s.
      if (Date.now() < at) this.wakeBy(at)
      else this.claimNow()
    }, Math.max(0, delay))
    this.retries.add(timer)
  }

  private prune (): void {
    this.pruning ??= this.pacer.run(() => this.store.prune(new Date(Date.now() - this.options.retention)))
      .then((count) => this.log.pruned(count), (error: Error) => this.log.failed(error, 'pruning deliveries'))
      .finally(() => { this.pruning = undefined })
  }

  /** Stops claiming, lets the attempts in flight finish for up to `grace` ms. */
  async stop (): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.unlisten?.()
    this.pressure?.stop()
    this.pacer.stop()
    for (const timer of this.timers) clearInterval(timer)
    for (const timer of this.retries) clearTimeout(timer)
    this.lanes.drop()
    // A claim under way starts nothing it gets once stopped: the release gives it back.
    await Promise.all([this.claimed, this.expanding, this.pruning, this.renewing, this.sweeping])
    let timer: NodeJS.Timeout | undefined
    const cutOff = new Promise<void>((resolve) => { timer = setTimeout(resolve, this.options.grace) })
    await Promise.race([Promise.allSettled([...this.inFlight]), cutOff])
    clearTimeout(timer)
    this.cut = true
    await this.agent.destroy()
    await Promise.allSettled([...this.inFlight])
    try {
      await this.store.release(this.owner)
    } catch (error) {
      this.log.failed(error as Error, 'releasing its leases')
    }
  }
}
