import { performance } from 'node:perf_hooks'
import type { StoreObserver } from '../store/observer.js'

/** Whether plant writes are being made: a store observer that notes when each batch of them starts. */
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
