import type { StoreObserver } from './observer.js'
import { StoreUnavailableError, type WriteOptions } from './types.js'

/** One caller waiting for the batch that holds its item. */
export interface Waiter<T, R> {
  item: T
  resolve: (result: R) => void
  reject: (error: unknown) => void
  /** False once the caller has its answer: an outcome, a timeout, or its client gone. */
  readonly waiting: boolean
}

export interface GroupCommitOptions<T, R> {
  /** Commits one batch and settles every waiter in it; it must not reject. */
  commit: (batch: Array<Waiter<T, R>>) => Promise<void>
  /** The most items in one batch. */
  maxBatch: number
  /** The most batches committing at once. */
  maxInFlight: number
  /** The longest a caller waits, in ms, queue included: then a StoreUnavailableError. */
  timeout: number
  /** The most items waiting for a batch: beyond it, add rejects at once. */
  maxQueue: number
  /** Hears of the queue and of each batch (metrics, traces). */
  observer?: StoreObserver
}

export interface GroupCommit<T, R> {
  /** Resolves or rejects once the batch that holds `item` is committed, or when its time is up. */
  add (item: T, options?: WriteOptions): Promise<R>
  /** Resolves once every item added so far is settled. */
  drain (): Promise<void>
}

/** A write and its caller, settled once: by the commit, by its deadline, or when its client has gone. */
class PendingWrite<T, R> implements Waiter<T, R> {
  private settled = false

  constructor (
    readonly item: T,
    readonly deadline: number,
    private readonly settle: { resolve: (result: R) => void, reject: (error: unknown) => void },
    private readonly abandoned?: () => boolean,
    readonly origin?: object
  ) {}

  resolve (result: R): void {
    if (this.settled) return
    this.settled = true
    this.settle.resolve(result)
  }

  reject (error: unknown): void {
    if (this.settled) return
    this.settled = true
    this.settle.reject(error)
  }

  get waiting (): boolean {
    if (!this.settled && this.abandoned?.() === true) this.reject(new StoreUnavailableError('the client has gone'))
    return !this.settled
  }

  /** True once settled; rejects it first when its deadline has passed at `now`. */
  expire (now: number, timeout: number): boolean {
    if (!this.settled && now >= this.deadline) this.reject(new StoreUnavailableError(`no answer within ${timeout} ms`))
    return this.settled
  }
}

/** Gathers the items added within one turn of the event loop into batches. */
export function groupCommit<T, R> (options: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  const { commit, maxBatch, maxInFlight, timeout, maxQueue, observer } = options
  let queue: Array<PendingWrite<T, R>> = []
  observer?.queue?.(() => queue.length)
  const inFlight = new Set<Promise<void>>()
  let scheduled = false

  // Every write not yet settled, in arrival order, so their deadlines ascend.
  let pending: Array<PendingWrite<T, R>> = []
  let head = 0
  let timer: NodeJS.Timeout | undefined

  function expire (): void {
    timer = undefined
    const now = Date.now()
    while (head < pending.length && pending[head].expire(now, timeout)) head++
    watch()
  }

  // Arms the timer for the first write still waiting, dropping the settled ones before it.
  function watch (): void {
    while (head < pending.length && !pending[head].waiting) head++
    if (head > 1024 && head * 2 > pending.length) {
      pending = pending.slice(head)
      head = 0
    }
    if (head === pending.length) {
      pending = []
      head = 0
      clearTimeout(timer)
      timer = undefined
      return
    }
    timer ??= setTimeout(expire, Math.max(0, pending[head].deadline - Date.now()))
  }

  function schedule (): void {
    if (scheduled || queue.length === 0) return
    scheduled = true
    // setImmediate runs after the poll phase: every request read in this turn of the loop joins the batch.
    setImmediate(flush)
  }

  function flush (): void {
    scheduled = false
    // Callers that have their answer already (timed out, or their client gone) are not sent.
    queue = queue.filter(stillWaiting)
    // While every slot is busy, new items gather into the next, larger batch.
    while (queue.length > 0 && inFlight.size < maxInFlight) {
      const batch = queue.splice(0, maxBatch)
      const end = observer?.batch?.(batch.length, batch)
      const done: Promise<void> = commit(batch).finally(() => {
        end?.()
        inFlight.delete(done)
        watch()
        schedule()
      })
      inFlight.add(done)
    }
  }

  return {
    add (item: T, { abandoned, origin }: WriteOptions = {}): Promise<R> {
      // Callers that have their answer already hold no place in the queue.
      if (queue.length >= maxQueue) queue = queue.filter(stillWaiting)
      if (queue.length >= maxQueue) {
        return Promise.reject(new StoreUnavailableError(`${queue.length} writes are waiting for the store, the most it queues`))
      }
      return new Promise((resolve, reject) => {
        const write = new PendingWrite<T, R>(item, Date.now() + timeout, { resolve, reject }, abandoned, origin)
        queue.push(write)
        pending.push(write)
        watch()
        schedule()
      })
    },

    async drain (): Promise<void> {
      while (queue.length > 0 || inFlight.size > 0) {
        flush()
        await Promise.all(inFlight)
      }
    }
  }
}

/** Whether anybody still waits for this write's outcome. */
export function stillWaiting<T, R> (waiter: Waiter<T, R>): boolean {
  return waiter.waiting
}
