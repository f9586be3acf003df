// Own code, not the SDK's: cheaper at the default sampler (docs/performance.md, "Figures", tracing).
import type { Link, SpanContext } from '@opentelemetry/api'
import type { RecordedSpan, SpanAttributes } from './spans.js'

// Spans are encoded when they end, each into the batch that will carry it.

// performance.now() is milliseconds since timeOrigin.
const ORIGIN = BigInt(Math.round(performance.timeOrigin * 1e6))
const ORIGIN_HIGH = Number(ORIGIN >> 32n)
const ORIGIN_LOW = Number(ORIGIN & 0xffffffffn)
const TWO_32 = 0x100000000

/** A span time (performance.now()) as nanoseconds since the epoch. */
export const unixNanos = (time: number): bigint => ORIGIN + BigInt(Math.round(time * 1e6))

// OTLP's span flags: the trace flags, and whether the parent (or a link) is remote.
const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200
const flags = (traceFlags: number, remote: boolean | undefined): number => (traceFlags & 0xff) | HAS_IS_REMOTE | (remote === true ? IS_REMOTE : 0)

// A hex digit's value: 0-9 and a-f (A-F as well).
const nibble = (code: number): number => code <= 57 ? code - 48 : (code | 32) - 87

const varintSize = (value: number): number => {
  let size = 1
  for (let rest = value; rest > 127; rest = Math.floor(rest / 128)) size++
  return size
}

// What a batch keeps free before its spans for the head that request() writes there.
const HEAD_ROOM = 256
// A batch's first buffer, and the most it keeps from one export to the next.
const FIRST_SIZE = 64 * 1024
const MAX_KEPT = 1024 * 1024

/** Protobuf: the spans of one export, each as field 2 of ScopeSpans, ready to be wrapped. */
export class ProtobufSpans {
  buffer: Buffer
  pos: number
  count = 0

  /** `size`: the buffer's first size; `start`: where the spans begin, after the room for the head. */
  constructor (size = FIRST_SIZE, private readonly start = HEAD_ROOM) {
    this.buffer = Buffer.allocUnsafe(size)
    this.pos = start
  }

  /** Empty again, its buffer kept unless it grew past MAX_KEPT: only once the export that carried it is over. */
  reset (): void {
    if (this.buffer.length > MAX_KEPT) this.buffer = Buffer.allocUnsafe(FIRST_SIZE)
    this.pos = this.start
    this.count = 0
  }

  private room (bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.pos + bytes))
    this.buffer.copy(grown, 0, 0, this.pos)
    this.buffer = grown
  }

  private varint (value: number): void {
    this.room(10)
    while (value > 127) {
      this.buffer[this.pos++] = (value % 128) | 128
      value = Math.floor(value / 128)
    }
    this.buffer[this.pos++] = value
  }

  private tag (field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }

  // A length-delimited field: the length is reserved before its content, and moved when it needs more bytes.
  private open (field: number, reserve: number): number {
    this.tag(field, 2)
    this.room(reserve)
    this.pos += reserve
    return this.pos
  }

  private close (start: number, reserve: number): void {
    const length = this.pos - start
    const size = varintSize(length)
    if (size !== reserve) {
      this.room(size - reserve)
      this.buffer.copy(this.buffer, start - reserve + size, start, this.pos)
      this.pos += size - reserve
    }
    const end = this.pos
    this.pos = start - reserve
    this.varint(length)
    this.pos = end
  }

  private string (field: number, value: string): void {
    // Most values are short ASCII (methods, paths, names): copied here, not through a call into C++.
    const length = value.length
    if (length < 128) {
      this.tag(field, 2)
      this.room(length + 1)
      const buffer = this.buffer
      let at = this.pos + 1
      for (let i = 0; i < length; i++) {
        const code = value.charCodeAt(i)
        if (code > 127) {
          at = -1
          break
        }
        buffer[at++] = code
      }
      if (at !== -1) {
        buffer[this.pos] = length
        this.pos = at
        return
      }
      this.pos -= varintSize(field * 8 + 2)
    }
    const start = this.open(field, 1)
    this.room(length * 3)
    this.pos += this.buffer.write(value, this.pos, 'utf8')
    this.close(start, 1)
  }

  // An id's hex (lowercase, as the ids and the W3C propagator give it) as its bytes.
  private hex (field: number, id: string): void {
    const bytes = id.length >> 1
    this.tag(field, 2)
    this.varint(bytes)
    this.room(bytes)
    const buffer = this.buffer
    let at = this.pos
    for (let i = 0; i < id.length; i += 2) buffer[at++] = (nibble(id.charCodeAt(i)) << 4) | nibble(id.charCodeAt(i + 1))
    this.pos = at
  }

  private time (field: number, time: number): void {
    this.tag(field, 1)
    this.room(8)
    const low = ORIGIN_LOW + Math.round(time * 1e6)
    this.buffer.writeUInt32LE(low % TWO_32, this.pos)
    this.buffer.writeUInt32LE(ORIGIN_HIGH + Math.floor(low / TWO_32), this.pos + 4)
    this.pos += 8
  }

  private fixed32 (field: number, value: number): void {
    this.tag(field, 5)
    this.room(4)
    this.pos = this.buffer.writeUInt32LE(value, this.pos)
  }

  private attributes (field: number, attributes: SpanAttributes): void {
    for (const key in attributes) {
      const value = attributes[key]
      const pair = this.open(field, 1)
      this.string(1, key)
      const any = this.open(2, 1)
      if (typeof value === 'string') {
        this.string(1, value)
      } else if (typeof value === 'boolean') {
        this.tag(2, 0)
        this.varint(value ? 1 : 0)
      } else if (Number.isSafeInteger(value) && value >= 0) {
        this.tag(3, 0)
        this.varint(value)
      } else if (Number.isSafeInteger(value)) {
        // A negative int64 is ten bytes of two's complement.
        this.tag(3, 0)
        this.room(10)
        for (let rest = BigInt.asUintN(64, BigInt(value)); ; rest >>= 7n) {
          if (rest < 128n) { this.buffer[this.pos++] = Number(rest); break }
          this.buffer[this.pos++] = Number(rest & 127n) | 128
        }
      } else {
        this.tag(4, 1)
        this.room(8)
        this.pos = this.buffer.writeDoubleLE(value, this.pos)
      }
      this.close(any, 1)
      this.close(pair, 1)
    }
  }

  private link ({ context }: Link): void {
    const start = this.open(13, 1)
    this.hex(1, context.traceId)
    this.hex(2, context.spanId)
    const state = context.traceState?.serialize()
    if (state) this.string(3, state)
    this.tag(5, 0)
    this.varint(0)
    this.fixed32(6, flags(context.traceFlags, context.isRemote))
    this.close(start, 1)
  }

  add (span: RecordedSpan): void {
    const start = this.open(2, 2)
    this.hex(1, span.traceId)
    this.hex(2, span.spanId)
    const state = span.traceState?.serialize()
    if (state) this.string(3, state)
    if (span.parent !== undefined) this.hex(4, span.parent.spanId)
    this.string(5, span.name)
    this.tag(6, 0)
    this.varint(span.kind + 1)
    this.time(7, span.startTime)
    this.time(8, span.endTime)
    this.attributes(9, span.attributes)
    this.tag(10, 0)
    this.varint(0)
    this.tag(12, 0)
    this.varint(0)
    for (const link of span.links) this.link(link)
    this.tag(14, 0)
    this.varint(0)
    const status = this.open(15, 1)
    if (span.status.message) this.string(2, span.status.message)
    this.tag(3, 0)
    this.varint(span.status.code)
    this.close(status, 1)
    this.fixed32(16, flags(1, span.parent?.isRemote))
    this.close(start, 2)
    this.count++
  }

  /** The ExportTraceServiceRequest: one resource, one scope, these spans. */
  request (serviceName: string, scopeName: string): Uint8Array {
    // ResourceSpans { resource, ScopeSpans { scope, spans } }, its lengths counted, not reserved.
    const fields = new ProtobufSpans(HEAD_ROOM, 0)
    const resource = fields.open(1, 1)
    fields.attributes(1, { 'service.name': serviceName })
    fields.tag(2, 0)
    fields.varint(0)
    fields.close(resource, 1)
    const resourceEnd = fields.pos
    const scope = fields.open(1, 1)
    fields.string(1, scopeName)
    fields.close(scope, 1)
    const spans = this.pos - this.start
    const scopeSpans = fields.pos - resourceEnd + spans
    const resourceSpans = resourceEnd + 1 + varintSize(scopeSpans) + scopeSpans

    const head = new ProtobufSpans(HEAD_ROOM, 0)
    head.tag(1, 2)
    head.varint(resourceSpans)
    head.room(fields.pos)
    head.pos += fields.buffer.copy(head.buffer, head.pos, 0, resourceEnd)
    head.tag(2, 2)
    head.varint(scopeSpans)
    head.pos += fields.buffer.copy(head.buffer, head.pos, resourceEnd, fields.pos)
    if (head.pos > this.start) return Buffer.concat([head.buffer.subarray(0, head.pos), this.buffer.subarray(this.start, this.pos)])
    const from = this.start - head.pos
    head.buffer.copy(this.buffer, from, 0, head.pos)
    return this.buffer.subarray(from, this.pos)
  }
}

type JsonAttribute = { key: string, value: { stringValue: string } | { boolValue: boolean } | { intValue: number } | { doubleValue: number } }

const jsonAttributes = (attributes: SpanAttributes): JsonAttribute[] => Object.keys(attributes).map((key) => {
  const value = attributes[key]
  return {
    key,
    value: typeof value === 'string'
      ? { stringValue: value }
      : typeof value === 'boolean' ? { boolValue: value } : Number.isSafeInteger(value) ? { intValue: value } : { doubleValue: value }
  }
})

const jsonLink = (context: SpanContext) => ({
  attributes: [],
  spanId: context.spanId,
  traceId: context.traceId,
  ...(context.traceState === undefined ? {} : { traceState: context.traceState.serialize() }),
  droppedAttributesCount: 0,
  flags: flags(context.traceFlags, context.isRemote)
})

/** OTLP/JSON: the spans of one export, each as its JSON text. */
export class JsonSpans {
  readonly spans: string[] = []
  get count (): number { return this.spans.length }

  /** Empty again (request() returns a copy: nothing of it is kept). */
  reset (): void {
    this.spans.length = 0
  }

  add (span: RecordedSpan): void {
    this.spans.push(JSON.stringify({
      traceId: span.traceId,
      spanId: span.spanId,
      ...(span.traceState === undefined ? {} : { traceState: span.traceState.serialize() }),
      ...(span.parent === undefined ? {} : { parentSpanId: span.parent.spanId }),
      name: span.name,
      kind: span.kind + 1,
      startTimeUnixNano: String(unixNanos(span.startTime)),
      endTimeUnixNano: String(unixNanos(span.endTime)),
      attributes: jsonAttributes(span.attributes),
      droppedAttributesCount: 0,
      events: [],
      droppedEventsCount: 0,
      status: span.status.message ? { code: span.status.code, message: span.status.message } : { code: span.status.code },
      links: span.links.map(({ context }) => jsonLink(context)),
      droppedLinksCount: 0,
      flags: flags(1, span.parent?.isRemote)
    }))
  }

  request (serviceName: string, scopeName: string): Uint8Array {
    const resource = JSON.stringify({ attributes: jsonAttributes({ 'service.name': serviceName }), droppedAttributesCount: 0 })
    return Buffer.from(`{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${JSON.stringify({ name: scopeName })},"spans":[${this.spans.join(',')}]}]}]}`)
  }
}

export type SpanBatch = ProtobufSpans | JsonSpans
