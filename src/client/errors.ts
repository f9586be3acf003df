/** What went wrong, told apart by a string TypeScript narrows on (`switch (error.kind)`). */
export type PlantStoreErrorKind = 'bad-request' | 'unauthorized' | 'forbidden' | 'not-found' | 'conflict' | 'precondition-failed' | 'rate-limited' | 'unavailable' | 'network' | 'other'

// Each kind with the status and retryAfter it comes with.
type Variant =
  | { readonly kind: 'bad-request', readonly status: 400, readonly retryAfter: undefined }
  | { readonly kind: 'unauthorized', readonly status: 401, readonly retryAfter: undefined }
  /** The token is valid but lacks the operation's scope: `scope` names it. */
  | { readonly kind: 'forbidden', readonly status: 403, readonly retryAfter: undefined }
  | { readonly kind: 'not-found', readonly status: 404, readonly retryAfter: undefined }
  | { readonly kind: 'conflict', readonly status: 409, readonly retryAfter: undefined }
  /** `ifMatch` named no current ETag of the plant (it changed, or is gone), or `ifNoneMatch` named it. */
  | { readonly kind: 'precondition-failed', readonly status: 412, readonly retryAfter: undefined }
  | { readonly kind: 'rate-limited', readonly status: 429, readonly retryAfter: number | undefined }
  | { readonly kind: 'unavailable', readonly status: 503, readonly retryAfter: number | undefined }
  /** No answer came: `cause` is what fetch threw. */
  | { readonly kind: 'network', readonly status: undefined, readonly retryAfter: undefined }
  /** Any other status (413, 415, 500 ...), or an answer that is not what the operation returns. */
  | { readonly kind: 'other', readonly status: number, readonly retryAfter: undefined }

const KINDS: Record<number, PlantStoreErrorKind> = {
  400: 'bad-request', 401: 'unauthorized', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 412: 'precondition-failed', 429: 'rate-limited', 503: 'unavailable'
}

export interface PlantStoreErrorInit {
  /** The HTTP status; absent when no answer came. */
  status?: number
  message: string
  /** Milliseconds to wait, from a 429's or 503's Retry-After. */
  retryAfter?: number
  /** The scope the token lacks, from a 403's WWW-Authenticate challenge. */
  scope?: string
  /** The request it belongs to: its method and URL (never its token). */
  method: string
  url: string
}

class PlantStoreErrorClass extends Error {
  /** What went wrong: the discriminant of the PlantStoreError union. */
  readonly kind: PlantStoreErrorKind
  /** The HTTP status of the answer; undefined when no answer came (kind `network`). */
  readonly status: number | undefined
  /** How long the service asked the client to wait, in milliseconds. */
  readonly retryAfter: number | undefined
  /** The scope the token lacks (`plants:write`, `webhooks` ...). */
  readonly scope: string | undefined
  /** The request's method. */
  readonly method: string
  /** The request's URL. The token travels in a header, never in the URL. */
  readonly url: string

  constructor (init: PlantStoreErrorInit, options?: ErrorOptions) {
    super(init.message, options)
    this.name = 'PlantStoreError'
    this.status = init.status
    this.kind = init.status === undefined ? 'network' : KINDS[init.status] ?? 'other'
    this.retryAfter = this.kind === 'rate-limited' || this.kind === 'unavailable' ? init.retryAfter : undefined
    this.scope = this.kind === 'forbidden' ? init.scope : undefined
    this.method = init.method
    this.url = init.url
  }
}

/** The one error the client throws for a failed call. */
export type PlantStoreError = PlantStoreErrorClass & Variant

interface PlantStoreErrorConstructor {
  new (init: PlantStoreErrorInit, options?: ErrorOptions): PlantStoreError
  // `instanceof` narrows to the prototype's type: the union, not the bare class.
  readonly prototype: PlantStoreError
}

export const PlantStoreError = PlantStoreErrorClass as PlantStoreErrorConstructor
