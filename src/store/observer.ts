/** A write as the observer of its batch sees it. */
export interface BatchedWrite {
  /** Who asked for it, when its caller said (WriteOptions.origin): an HTTP request. */
  readonly origin?: object
}

/** What a store tells whoever watches it (metrics, traces), when asked to. */
export interface StoreObserver {
  /** Given once, with a way to read how many writes wait for a batch; read when metrics are scraped. */
  queue?: (depth: () => number) => void
  /** A batch of `size` writes starts to commit: the function it returns is called once the batch is settled. */
  batch?: (size: number, writes: readonly BatchedWrite[]) => (() => void) | undefined
  /** false when an outage starts, true when the store answers again. */
  available?: (up: boolean) => void
}

/** One observer that tells each of `observers` in turn. */
export function combineObservers (...observers: Array<StoreObserver | undefined>): StoreObserver {
  const all = observers.filter((observer) => observer !== undefined)
  return {
    queue: (depth) => { for (const observer of all) observer.queue?.(depth) },
    batch: (size, writes) => {
      const ends = all.map((observer) => observer.batch?.(size, writes))
      return () => { for (const end of ends) end?.() }
    },
    available: (up) => { for (const observer of all) observer.available?.(up) }
  }
}
