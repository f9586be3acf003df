/** How the client retries; every field is optional. Times are in milliseconds. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  max?: number
  /** The first backoff's ceiling (default 100): attempt n waits a random time below baseDelay × 2^n ... */
  baseDelay?: number
  /** ... and never more than this (default 5000). */
  maxDelay?: number
  /** The longest Retry-After the client waits out (default 60000); a longer one is thrown to the caller at once. */
  maxRetryAfter?: number
}

export type RetryPolicy = Required<RetryOptions>

export function retryPolicy (option: number | RetryOptions | undefined): RetryPolicy {
  const given = typeof option === 'number' ? { max: option } : option ?? {}
  const policy = { max: 3, baseDelay: 100, maxDelay: 5000, maxRetryAfter: 60_000, ...given }
  for (const [name, value] of Object.entries(policy)) {
    if (!(Number.isSafeInteger(value) && value >= 0)) throw new TypeError(`retries.${name} must be a whole number, 0 or more`)
  }
  return policy
}

/** Capped exponential backoff with full jitter: clients that failed together do not retry together. */
export function backoff (policy: RetryPolicy, attempt: number): number {
  return Math.random() * Math.min(policy.maxDelay, policy.baseDelay * 2 ** attempt)
}

// An HTTP date as senders must write it (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

/** A Retry-After header in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfter (header: string | null): number | undefined {
  const value = header?.trim() ?? ''
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const date = HTTP_DATE.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep (ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted()
    const abort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', abort, { once: true })
  })
}
