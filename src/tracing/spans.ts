// Own code, not the SDK's: cheaper at the default sampler (docs/performance.md, "Figures", tracing).
import { randomFillSync } from 'node:crypto'
import { ROOT_CONTEXT, SamplingDecision, TraceFlags, trace, type Context, type Link, type Sampler, type SpanContext, type SpanKind, type SpanStatus, type TraceState } from '@opentelemetry/api'

/** The attribute values this service gives its spans. */
export type SpanAttributes = Record<string, string | number | boolean>

/** What is done with a span when it ends: encoded for export, or kept by a test. */
export type SpanSink = (span: RecordedSpan) => void

const UNSET: SpanStatus = Object.freeze({ code: 0 })
const NO_LINKS: readonly Link[] = Object.freeze([])
// What a sampler is told of a span's attributes before it starts: none (the standard ones read none).
const NO_ATTRIBUTES = Object.freeze({})

/** A sampled span: the few fields OTLP sends, nothing else. */
export class RecordedSpan {
  /** performance.now() at start and end: see unixNanos. */
  readonly startTime = performance.now()
  endTime = -1
  status: SpanStatus = UNSET
  /** What went wrong while a request's span was open (its onError), for its status once the answer is known. */
  error: Error | undefined = undefined

  constructor (
    private readonly sink: SpanSink,
    readonly traceId: string,
    readonly spanId: string,
    /** The parent's context: a caller's (remote) or a span of this process. */
    readonly parent: SpanContext | undefined,
    readonly name: string,
    readonly kind: SpanKind,
    readonly attributes: SpanAttributes,
    readonly links: readonly Link[] = NO_LINKS,
    readonly traceState: TraceState | undefined = parent?.traceState
  ) {}

  spanContext (): SpanContext {
    return { traceId: this.traceId, spanId: this.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false, traceState: this.traceState }
  }

  setAttribute (key: string, value: string | number | boolean): void {
    if (this.endTime === -1) this.attributes[key] = value
  }

  setStatus (status: SpanStatus): void {
    if (this.endTime === -1) this.status = status
  }

  end (): void {
    if (this.endTime !== -1) return
    this.endTime = performance.now()
    this.sink(this)
  }
}

// Random trace and span ids, sliced from a pool of random bytes turned to hex at once: V8 slices a string
// without copying, and a new trace id is drawn for every request that comes without one.
export class RandomIds {
  private readonly pool = Buffer.alloc(16 * 256)
  private hex: string | undefined
  private at = this.pool.length

  /** `fill` puts random bytes in the pool: a test gives its own, to draw ids it chose. */
  constructor (private readonly fill: (pool: Buffer) => void = randomFillSync) {}

  /** Where the next `bytes` random bytes are in the pool. */
  private take (bytes: number): number {
    if (this.at + bytes > this.pool.length) {
      this.fill(this.pool)
      this.hex = undefined
      this.at = 0
    }
    this.at += bytes
    return this.at - bytes
  }

  private id (at: number, bytes: number): string {
    this.hex ??= this.pool.toString('hex')
    return this.hex.slice(2 * at, 2 * (at + bytes))
  }

  traceId (): string {
    const id = this.id(this.take(16), 16)
    // All zeros is not a valid id (one chance in 2^128, but it would be dropped by every collector).
    return id === '00000000000000000000000000000000' ? this.traceId() : id
  }

  /** The next trace id if it falls below `bound` as TraceIdRatioBasedSampler decides; otherwise undefined. */
  traceIdBelow (bound: number): string | undefined {
    const at = this.take(16)
    const pool = this.pool
    const words = (pool.readUInt32BE(at) ^ pool.readUInt32BE(at + 4) ^ pool.readUInt32BE(at + 8) ^ pool.readUInt32BE(at + 12)) >>> 0
    if (words >= bound) return undefined
    const id = this.id(at, 16)
    return id === '00000000000000000000000000000000' ? this.traceIdBelow(bound) : id
  }

  spanId (): string {
    const id = this.id(this.take(8), 8)
    return id === '0000000000000000' ? this.spanId() : id
  }
}

/** What a standard sampler (OTEL_TRACES_SAMPLER) decides for a trace that starts here, without a parent. */
export function rootBound (name: string, ratio: number): number {
  if (name.endsWith('always_off')) return 0
  if (!name.endsWith('traceidratio')) return 0x100000000
  // loadConfig accepts a ratio from 0 to 1 only.
  return ratio >= 1 ? 0x100000000 : Math.floor(ratio * 0xffffffff)
}

/** Starts spans that a standard sampler (OTEL_TRACES_SAMPLER) has said to record. */
export class SpanTracer {
  constructor (
    private readonly sampler: Sampler,
    readonly sink: SpanSink,
    readonly ids: RandomIds = new RandomIds(),
    /** The sampler's decision for a new trace as rootBound gives it, when it is a standard one. */
    private readonly root?: number
  ) {}

  /** The id of a new trace (no parent) whose span `name` the sampler records, or undefined. */
  newTrace (name: string, kind: SpanKind): string | undefined {
    if (this.root !== undefined) return this.ids.traceIdBelow(this.root)
    const traceId = this.ids.traceId()
    return this.sampled(ROOT_CONTEXT, traceId, name, kind) ? traceId : undefined
  }

  /** Whether the sampler records a span of `traceId` under `parent`. */
  sampled (parent: Context, traceId: string, name: string, kind: SpanKind, links: readonly Link[] = NO_LINKS): boolean {
    return this.sampler.shouldSample(parent, traceId, name, kind, NO_ATTRIBUTES, links as Link[]).decision === SamplingDecision.RECORD_AND_SAMPLED
  }

  /** Starts a span the sampler has said to record; `parent` is in the trace `traceId`. */
  start (name: string, kind: SpanKind, attributes: SpanAttributes, traceId: string, parent?: SpanContext, links?: readonly Link[]): RecordedSpan {
    return new RecordedSpan(this.sink, traceId, this.ids.spanId(), parent, name, kind, attributes, links)
  }

  /** Asks the sampler, then starts the span: a root span without `parent`. Undefined when not sampled. */
  startSpan (name: string, kind: SpanKind, attributes: SpanAttributes, parent?: SpanContext, links?: readonly Link[]): RecordedSpan | undefined {
    const traceId = parent?.traceId ?? this.ids.traceId()
    const context = parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent)
    if (!this.sampled(context, traceId, name, kind, links)) return undefined
    return this.start(name, kind, attributes, traceId, parent, links)
  }
}
