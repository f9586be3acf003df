import type { StoreObserver } from './observer.js'

/** One caller waiting for the batch that holds its item. */
export interface Waiter<T, R> {
  item: T
  resolve: (result: R) => void
  reject: (error: unknown) => void
}

export interface GroupCommitOptions<T, R> {
  /** Commits one batch and settles every waiter in it; it must not reject. */
  commit: (batch: Array<Waiter<T, R>>) => Promise<void>
  /** The most items in one batch. */
  maxBatch: number
  /** The most batches committing at once. */
  maxInFlight: number
  /** Hears of the queue and of each batch (metrics, traces). */
  observer?: StoreObserver
}

export interface GroupCommit<T, R> {
  /** Resolves or rejects once the batch that holds `item` is committed. */
  add (item: T): Promise<R>
  /** Resolves once every item added so far is settled. */
  drain (): Promise<void>
}

/**
 * Gathers the items added within one turn of the event loop into batches, so
 * that many callers share one commit instead of paying one each.
 */
export function groupCommit<T, R> (options: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  const { commit, maxBatch, maxInFlight, observer } = options
  const queue: Array<Waiter<T, R>> = []
  observer?.queue?.(() => queue.length)
  const inFlight = new Set<Promise<void>>()
  let scheduled = false

  function schedule (): void {
    if (scheduled || queue.length === 0) return
    scheduled = true
    // setImmediate runs after the poll phase: every request read in this turn of the loop joins the batch.
    setImmediate(flush)
  }

  function flush (): void {
    scheduled = false
    // While every slot is busy, new items gather into the next, larger batch.
    while (queue.length > 0 && inFlight.size < maxInFlight) {
      const batch = queue.splice(0, maxBatch)
      const end = observer?.batch?.(batch.length)
      const done: Promise<void> = commit(batch).finally(() => {
        end?.()
        inFlight.delete(done)
        schedule()
      })
      inFlight.add(done)
    }
  }

  return {
    add (item: T): Promise<R> {
      return new Promise((resolve, reject) => {
        queue.push({ item, resolve, reject })
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
