import { performance } from 'node:perf_hooks'
import type { StoreObserver } from '../store/observer.js'

/**
 * Whether plant writes are being made: a store observer that notes when each batch of them
 * starts, and the test the sender's pacing reads. While they are, the sender's store work
 * keeps to its share; once they stop, the deliveries that lagged catch up at full speed.
 */
export function plantWrites (window = 1000): { observer: StoreObserver, writing: () => boolean } {
  let last = -Infinity
  return {
    observer: {
      batch: () => {
        last = performance.now()
        return undefined
      }
    },
    writing: () => performance.now() - last < window
  }
}
