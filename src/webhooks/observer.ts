import type { AttemptOutcome, ClaimedDelivery } from '../store/webhook-types.js'

/** What one attempt adds to its request, and who hears how it ended. */
export interface AttemptWatch {
  /** Headers for the attempt's request (a traceparent). */
  headers?: Record<string, string>
  end (outcome: AttemptOutcome): void
}

/** Hears of every webhook attempt the sender makes (metrics, traces). */
export interface WebhookObserver {
  attempt (delivery: ClaimedDelivery): AttemptWatch
}

/** One observer that tells each of `observers`; the headers of all go on the request. */
export function combineWebhookObservers (...observers: Array<WebhookObserver | undefined>): WebhookObserver | undefined {
  const all = observers.filter((observer) => observer !== undefined)
  if (all.length === 0) return undefined
  return {
    attempt (delivery) {
      const watches = all.map((observer) => observer.attempt(delivery))
      return {
        headers: Object.assign({}, ...watches.map((watch) => watch.headers)),
        end: (outcome) => { for (const watch of watches) watch.end(outcome) }
      }
    }
  }
}
