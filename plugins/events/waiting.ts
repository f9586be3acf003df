import type { EventFeed, FeedPage, FeedQuery } from '../../src/store/feed-types.js'

/** The shortest time between two wake-ups of the waiting requests, in ms. */
export const WAKE_MS = 50

/** The long polls of one app: the commits heard while anyone waits, and one shared read per query when a commit wakes them. */
export function waitingRoom (feed: EventFeed, limit: number) {
  const waiters = new Set<() => void>()
  let interested = 0
  let commits = 0
  let closing = false
  let stop: (() => void) | undefined
  // The reads under way, by query and by the commits heard when each started.
  const reads = new Map<string, Promise<FeedPage>>()

  // At once after a quiet spell, then at most every WAKE_MS: a follower gets several batches an answer.
  let woken = -Infinity
  let pending: NodeJS.Timeout | undefined
  // When a waiting request last answered with events: the next answer of a part page comes WAKE_MS later at the earliest.
  let answered = -Infinity
  function wakeNow (): void {
    pending = undefined
    woken = performance.now()
    commits++
    for (const waiter of waiters) waiter()
  }
  function wake (): void {
    if (pending !== undefined) return
    const due = woken + WAKE_MS - performance.now()
    if (due <= 0) wakeNow()
    else pending = setTimeout(wakeNow, due)
  }

  return {
    /** Whether a request may wait now: fewer than `limit` do, and the app is not closing. */
    get open (): boolean {
      return !closing && interested < limit
    },

    /** A request that may wait comes in: its read and its wait then see every commit. */
    enter (): { seen: number, leave: () => void } {
      if (interested++ === 0) stop = feed.onCommit(wake)
      let left = false
      return {
        seen: commits,
        leave: () => {
          /* c8 ignore next -- a second leave (an abort racing the answer) is not arranged by a test; the guard keeps it from counting twice */
          if (left) return
          left = true
          if (--interested === 0) (stop as () => void)()
        }
      }
    },

    /** Resolves once a commit follows `seen` (true), or on `until` (ms since the epoch), `gone`, or a close. */
    async wait (seen: number, until: number, gone: AbortSignal): Promise<boolean> {
      if (commits !== seen) return true
      if (closing || gone.aborted) return false
      return await new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(timer)
          waiters.delete(waiter)
          gone.removeEventListener('abort', done)
          resolve(commits !== seen)
        }
        const waiter = done
        const timer = setTimeout(done, Math.max(0, until - Date.now()))
        waiters.add(waiter)
        gone.addEventListener('abort', done)
      })
    },

    /** A woken request's read: it joins one of its query begun after every commit heard so far, or begins it. */
    async read (query: FeedQuery): Promise<FeedPage> {
      const key = `${query.after}:${query.limit}:${query.types}:${commits}`
      let read = reads.get(key)
      if (read === undefined) {
        read = feed.read(query)
        reads.set(key, read)
        const forget = (): void => { reads.delete(key) }
        read.then(forget, forget)
      }
      return await read
    },

    /**
     * Ms a waiting request whose page holds some events but is not full keeps its answer: what is left of
     * WAKE_MS since the last answer with events. A follower at the head of a stream of commits then gets a
     * batch every WAKE_MS, not an answer every few commits; after a quiet spell it is 0.
     */
    get hold (): number {
      return Math.max(0, answered + WAKE_MS - performance.now())
    },

    /** A waiting request answers with events now. */
    answered (): void {
      answered = performance.now()
    },

    get commits (): number {
      return commits
    },

    /** A shutdown: every waiting request answers now with what it has, and none waits again. */
    close (): void {
      closing = true
      clearTimeout(pending)
      for (const waiter of waiters) waiter()
    }
  }
}
