import type { Outage } from './outage.js'

/** How often, at most, a store's readiness check asks the database, in ms. */
export const CHECK_EVERY = 1000

/**
 * A store's readiness check, made at most once every CHECK_EVERY ms whatever the number of
 * callers: those that come while it runs share it, those that come soon after get its
 * outcome. A flood of unauthenticated probes then costs the database one check a second
 * (a write, on SQLite), not one per probe. An outage that starts or ends since the last
 * check (a request's write failed, or one succeeded again) makes the next call check at
 * once: readiness follows what the requests meet, not a second behind it.
 */
export function readyCheck (check: () => Promise<void>, outage: Pick<Outage, 'changes'>): () => Promise<void> {
  let last: Promise<void> | undefined
  let started = 0
  let seen = 0
  let running = false
  return () => {
    if (last === undefined || (!running && (performance.now() - started >= CHECK_EVERY || outage.changes() !== seen))) {
      started = performance.now()
      running = true
      // The outage the check itself finds (or ends) is its outcome: it does not call for another.
      last = check().finally(() => {
        running = false
        seen = outage.changes()
      })
    }
    return last
  }
}
