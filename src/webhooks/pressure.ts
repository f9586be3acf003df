import { performance } from 'node:perf_hooks'

/**
 * Whether the process is busy serving: the event loop's utilization over the last `interval` ms above
 * `threshold`.
 */
export class Pressure {
  private busy = false
  private last = performance.eventLoopUtilization()
  private readonly timer: NodeJS.Timeout

  constructor (onEase: () => void, { threshold = 0.9, interval = 200 } = {}) {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization()
      const was = this.busy
      this.busy = performance.eventLoopUtilization(now, this.last).utilization > threshold
      this.last = now
      if (was && !this.busy) onEase()
    }, interval)
    // Nothing to keep the process up for.
    this.timer.unref()
  }

  get high (): boolean {
    return this.busy
  }

  stop (): void {
    clearInterval(this.timer)
  }
}
