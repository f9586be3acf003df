import type { Outage } from './outage.js'

/** How often, at most, a store's readiness check asks the database, in ms. */
export const CHECK_EVERY = 1000

/** A store's readiness check, made at most once every CHECK_EVERY ms whatever the number of callers. */
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
