import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Agent, ClientRequest } from 'node:http'
import { ExportResultCode } from '@opentelemetry/core'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { endpointSecrets, redactEndpoint, redactSecrets } from '../config/redact.js'
import type { FastifyBaseLogger } from 'fastify'
import { JsonSpans, ProtobufSpans, type SpanBatch } from './otlp-encode.js'
import type { RecordedSpan } from './spans.js'

export interface SpanExportOptions {
  /** The OTLP/HTTP traces endpoint, as it is. */
  url: string
  protocol: 'http/protobuf' | 'http/json'
  serviceName: string
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>
  /** Spans waiting for export: beyond it they are dropped (and said so), never queued without end. */
  maxQueue?: number
  /** Spans in one export. */
  batchSize?: number
  /** The longest a span waits for a batch to fill, in ms. */
  delay?: number
  /** One export, its retries included, in ms: a collector that is down only loses spans. */
  timeout?: number
}

// The OTLP exporter's own name for the scope, as the SDK's tracer had it.
const SCOPE = 'plant-store'

// Past an export's timeout, what is still open on its connection is cut.
const GRACE = 100

// Informational (1xx) answers an export takes before its final one.
const MAX_INFORMATIONAL = 8

/**
 * Sends spans to an OTLP/HTTP collector in batches, one export at a time, through
 * @opentelemetry/otlp-exporter-base's transport; the spans are encoded as each ends (otlp-encode.ts).
 */
export class SpanExport {
  private readonly maxQueue: number
  private readonly batchSize: number
  private readonly delay: number
  private readonly delegate
  private current: SpanBatch
  private readonly ready: SpanBatch[] = []
  // A batch whose export succeeded, emptied for the next: its buffer is not allocated again.
  private spare: SpanBatch | undefined
  private queued = 0
  private dropped = 0
  private exporting = false
  private failing = false
  private closing: { failure?: Error, drained: () => void } | undefined
  private timer: NodeJS.Timeout | undefined
  // The transport's agent, made by the package's own factory: its sockets are what a late export holds.
  private agent: Agent | undefined
  private readonly timeout: number
  // Where the warnings say the spans went, and what they never show: the endpoint's credentials.
  private readonly where: string
  private readonly secrets: string[]
  private readonly url: URL

  constructor (private readonly options: SpanExportOptions) {
    this.maxQueue = options.maxQueue ?? 2048
    this.batchSize = options.batchSize ?? 512
    this.delay = options.delay ?? 5000
    const json = options.protocol === 'http/json'
    const serializer = {
      serializeRequest: (batch: SpanBatch) => batch.request(options.serviceName, SCOPE),
      deserializeResponse: (json ? JsonTraceSerializer : ProtobufTraceSerializer).deserializeResponse
    }
    const config = convertLegacyHttpOptions({ url: options.url, timeoutMillis: options.timeout ?? 5000 }, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' })
    this.timeout = config.timeoutMillis
    this.where = redactEndpoint(options.url)
    this.secrets = endpointSecrets(options.url)
    const makeAgent = config.agentFactory
    config.agentFactory = async (protocol) => (this.agent = await makeAgent(protocol) as Agent)
    const component = json ? 'otlp_http_json_span_exporter' : 'otlp_http_span_exporter'
    this.delegate = createOtlpHttpExportDelegate(config, serializer, component, { name: 'span', countItems: (batch: SpanBatch) => batch.count }, undefined)
    this.current = this.batch()
    this.url = new URL(config.url)
    // The transport's requests are its own: Node's channel for every client request shows them.
    subscribe('http.client.request.start', this.bound)
  }

  /** Cuts an export to which the collector sends informational answers without end. */
  private readonly bound = (message: unknown): void => {
    const { request } = message as { request: ClientRequest }
    const url = this.url
    if (request.protocol !== url.protocol || request.getHeader('host') !== url.host || request.path !== url.pathname + url.search) return
    let informational = 0
    request.on('information', () => {
      if (++informational > MAX_INFORMATIONAL) request.destroy(new Error(`the collector sent more than ${MAX_INFORMATIONAL} informational (1xx) answers`))
    })
  }

  private batch (): SpanBatch {
    const spare = this.spare
    this.spare = undefined
    return spare ?? (this.options.protocol === 'http/json' ? new JsonSpans() : new ProtobufSpans())
  }

  /** A span that ended: encoded into the batch that will carry it. */
  readonly record = (span: RecordedSpan): void => {
    if (this.queued >= this.maxQueue) {
      this.dropped++
      return
    }
    this.current.add(span)
    this.queued++
    if (this.current.count >= this.batchSize) {
      this.seal()
      this.next()
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined
        this.seal()
        this.next()
      }, this.delay).unref()
    }
  }

  private seal (): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.current.count === 0) return
    this.ready.push(this.current)
    this.current = this.batch()
  }

  private next (): void {
    if (this.exporting) return
    const batch = this.ready.shift()
    if (batch === undefined) {
      this.closing?.drained()
      return
    }
    this.exporting = true
    const late = setTimeout(() => this.agent?.destroy(), this.timeout + GRACE).unref()
    this.delegate.export(batch, ({ code, error }) => {
      clearTimeout(late)
      this.exporting = false
      this.queued -= batch.count
      if (code === ExportResultCode.SUCCESS) {
        this.failing = false
        // Only after a success: a failure may be the delegate's timeout, with the request still being written.
        batch.reset()
        this.spare = batch
      } else if (this.closing !== undefined) {
        // The export delegate gives every failure its error.
        this.closing.failure = error as Error
      } else if (!this.failing) {
        // Once per run of failures: the spans of every export until one succeeds are lost.
        this.failing = true
        this.options.log.warn({ url: this.where, status: (error as Error & { code?: number }).code, reason: redactSecrets((error as Error).message, this.secrets) }, 'the trace collector did not take the spans: they are lost until it does')
      }
      if (this.dropped > 0) {
        this.options.log.warn({ url: this.where, dropped: this.dropped }, `trace spans dropped: more than ${this.maxQueue} waited for the collector`)
        this.dropped = 0
      }
      this.next()
    })
  }

  /** Sends every span recorded so far; rejects when the collector did not take them. */
  async close (): Promise<void> {
    const drained = new Promise<void>((resolve) => { this.closing = { drained: resolve } })
    this.seal()
    this.next()
    await drained
    await this.delegate.shutdown()
    unsubscribe('http.client.request.start', this.bound)
    const failure = this.closing?.failure
    if (failure !== undefined) throw failure
  }
}
