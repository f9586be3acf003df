import { parseExact } from '../shared/exact-json.js'
import { PlantStoreError } from './errors.js'
import { backoff, retryAfter, sleep, type RetryPolicy } from './retry.js'

/** Per call: a signal that aborts it, retries and waits included. */
export interface CallOptions {
  signal?: AbortSignal
}

/** `idempotent`: retried on no answer, 429 and 503; `once` (doing it twice is not doing it once): on 429 only. */
export type Repeat = 'idempotent' | 'once'

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  url: URL
  /** A JSON text. */
  body?: string
  /** Headers of this call (a precondition, the body's type when not application/json). */
  headers?: Record<string, string>
  repeat: Repeat
}

export interface Answer {
  status: number
  headers: Headers
  text: string
  /** An earlier attempt of this call got no answer: it may have been done. */
  lost: boolean
}

export type Send = (call: Call, options?: CallOptions) => Promise<Answer>

/** The one way the client talks to the service. */
export function transport (doFetch: typeof fetch, token: string, policy: RetryPolicy): Send {
  return async ({ method, url, body, headers: own, repeat }, { signal } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    Object.assign(headers, own)

    const attempt = async (n: number, lost: boolean): Promise<Answer> => {
      signal?.throwIfAborted()
      const last = n >= policy.max
      let answer: Answer
      try {
        // A plain call: a browser's fetch refuses to run as a method of another object.
        const response = await doFetch(url, { method, headers, body, signal })
        answer = { status: response.status, headers: response.headers, text: await response.text(), lost }
      } catch (cause) {
        // An abort is the caller's decision, not a failure to retry.
        signal?.throwIfAborted()
        if (last || repeat === 'once') {
          throw new PlantStoreError({ message: `No answer to ${method} ${url.href}: ${(cause as Error).message}`, method, url: url.href }, { cause })
        }
        await sleep(backoff(policy, n), signal)
        return attempt(n + 1, true)
      }
      const { status } = answer
      if (last || !(status === 429 || (status === 503 && repeat === 'idempotent'))) return answer
      const asked = retryAfter(answer.headers.get('retry-after'))
      // Waiting longer than the caller allows: the error, with retryAfter, is theirs to act on.
      if (asked !== undefined && asked > policy.maxRetryAfter) return answer
      await sleep(asked ?? backoff(policy, n), signal)
      return attempt(n + 1, lost)
    }
    return attempt(0, false)
  }
}

/** The PlantStoreError for an answer that is not the operation's success. */
export function fail (call: Call, answer: Answer): PlantStoreError {
  const { status, text } = answer
  let message = `The service answered ${call.method} ${call.url.href} with ${status}`
  if (status >= 200 && status < 300) message += ', not the answer this operation gives.'
  else {
    try {
      const body = JSON.parse(text) as { message?: unknown }
      if (typeof body.message === 'string') message = body.message
    } catch {
      // Not the Error body (a proxy's page, perhaps): the status says it all.
    }
  }
  // RFC 6750 §3: the challenge of a 403 names the scope the token lacks.
  const scope = /[\s,]scope="([^"]*)"/.exec(answer.headers.get('www-authenticate') ?? '')?.[1]
  return new PlantStoreError({ status, message, retryAfter: retryAfter(answer.headers.get('retry-after')), scope, method: call.method, url: call.url.href })
}

/** The JSON body of a success, numbers exact (ids beyond 2^53 as bigint), or `fail`. */
export function readBody (call: Call, answer: Answer, status: number): unknown {
  if (answer.status !== status) throw fail(call, answer)
  try {
    return parseExact(answer.text)
  } catch {
    throw fail(call, answer)
  }
}

/** Checks an answer without a body. */
export function expectEmpty (call: Call, answer: Answer, status: number): void {
  if (answer.status === status || (call.method === 'DELETE' && answer.status === 404 && answer.lost)) return
  throw fail(call, answer)
}
