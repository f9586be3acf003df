import type { ClaimedDelivery } from '../store/webhook-types.js'

/** The sender's bounds: attempts in flight per endpoint and in all. */
export class Lanes {
  /** Attempts in flight, in all. */
  running = 0
  private readonly busy = new Map<string, number>()
  private readonly waiting = new Map<string, ClaimedDelivery[]>()

  constructor (readonly perEndpoint: number, readonly total: number) {}

  /** How many more attempts may start. */
  room (): number {
    return this.total - this.running
  }

  /** Endpoints to leave out of a claim: a round of their lanes, or more, waiting. */
  full (): string[] {
    return [...this.waiting].filter(([, queue]) => queue.length >= this.perEndpoint).map(([id]) => id)
  }

  /** Deliveries waiting for the endpoint's lanes. */
  queued (endpoint: string): number {
    return this.waiting.get(endpoint)?.length ?? 0
  }

  /** True when the delivery's attempt may start now (it is counted); false when it waits. */
  admit (delivery: ClaimedDelivery): boolean {
    const endpoint = delivery.endpointId
    const busy = this.busy.get(endpoint) ?? 0
    if (busy < this.perEndpoint && !this.waiting.has(endpoint)) {
      this.busy.set(endpoint, busy + 1)
      this.running++
      return true
    }
    const queue = this.waiting.get(endpoint)
    if (queue === undefined) this.waiting.set(endpoint, [delivery])
    else queue.push(delivery)
    return false
  }

  /** An attempt to `endpoint` ended: the delivery that waited for it, now counted, if any. */
  end (endpoint: string): ClaimedDelivery | undefined {
    const queue = this.waiting.get(endpoint)
    const next = queue?.shift()
    if (queue?.length === 0) this.waiting.delete(endpoint)
    if (next !== undefined) return next
    this.running--
    const busy = (this.busy.get(endpoint) as number) - 1
    if (busy === 0) this.busy.delete(endpoint)
    else this.busy.set(endpoint, busy)
    return undefined
  }

  /** Forgets the waiting deliveries (their leases are given back) and returns how many there were. */
  drop (): number {
    const count = [...this.waiting.values()].reduce((sum, queue) => sum + queue.length, 0)
    this.waiting.clear()
    return count
  }
}
