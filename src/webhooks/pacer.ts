import { performance } from 'node:perf_hooks'

/** Keeps the sender's store work to a share of the time while plant writes are being made (`contended`). */
export class Pacer {
  private until = 0
  private readonly waits = new Set<() => void>()

  /** `share`: the part of the time, above 0 and at most 1, that the sender's store work may take. */
  constructor (private readonly share: number, private readonly contended: () => boolean = () => true) {}

  /** Resolves once the next piece of work may start (at once after stop()). */
  async turn (): Promise<void> {
    const wait = this.until - performance.now()
    if (wait <= 0 || !this.contended()) return
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.waits.delete(done)
        resolve()
      }
      const timer = setTimeout(done, wait)
      this.waits.add(done)
    })
  }

  /** A piece of work took `ms`: the next one waits (1 - share) / share times as long. */
  charge (ms: number): void {
    if (!this.contended()) return
    this.until = Math.max(this.until, performance.now()) + ms * (1 - this.share) / this.share
  }

  /** Waits for its turn, runs `work` and charges the time it took. */
  async run<T> (work: () => Promise<T>): Promise<T> {
    await this.turn()
    const start = performance.now()
    try {
      return await work()
    } finally {
      this.charge(performance.now() - start)
    }
  }

  /** Ends every wait now. */
  stop (): void {
    for (const done of [...this.waits]) done()
  }
}
