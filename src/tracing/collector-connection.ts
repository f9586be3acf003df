import { validateHeaderName, validateHeaderValue } from 'node:http'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { OTLPExporterError, type ExportResponse, type IExporterTransport } from '@opentelemetry/otlp-exporter-base'
import { retryAfter } from '../client/retry.js'
import { AnswerReader, type CollectorAnswer } from './collector-answer.js'

export interface CollectorConnectionOptions {
  /** An http: URL (https: endpoints go through @opentelemetry/otlp-exporter-base's own transport). */
  url: string
  /** Read once, at the first export: the configured headers do not change while the service runs. */
  headers: () => Promise<Record<string, string>>
  compression: 'gzip' | 'none'
}

// The answers worth another attempt, as @opentelemetry/otlp-exporter-base decides; a connection
// that fails is always worth one while the export's deadline allows (the package picks by error code).
const RETRYABLE_STATUS = new Set([429, 502, 503, 504])
// Its retries too: six attempts at most, 1 s apart and then 1.5 times longer each time (±20%,
// at most 5 s), or as Retry-After says; none that would end past the export's deadline.
const ATTEMPTS = 6
const FIRST_BACKOFF = 1000
const MAX_BACKOFF = 5000
// A kept-alive connection the collector closed as the export went out: sent again on a new one.
const STALE = Symbol('stale')

type Exchange = { data: (chunk: Buffer) => void, end: () => void, error: (error: Error) => void }

/**
 * Sends each export to an OTLP/HTTP collector as one latin1 string on a kept-alive
 * socket, the one kind of write the service's own responses make. Node's HTTP client
 * (and undici) write through objects of other shapes, and V8 then deoptimizes the
 * server's response path for the rest of the run: measured at 2% of every request at
 * 10% sampling (README, "What metrics and tracing cost"). One export at a time, as SpanExport sends them.
 */
export class CollectorConnection implements IExporterTransport {
  private readonly url: URL
  private head: string | undefined
  private socket: Socket | undefined
  private exchange: Exchange | undefined
  private closed = false

  constructor (private readonly options: CollectorConnectionOptions) {
    this.url = new URL(options.url)
  }

  async send (data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
    const deadline = Date.now() + timeoutMillis
    this.head ??= await this.requestHead()
    const body = this.options.compression === 'gzip' ? await promisify(gzip)(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    const message = `${this.head}Content-Length: ${body.length}\r\n\r\n${body.toString('latin1')}`
    let result = await this.attempt(message, deadline)
    for (let attempt = 1, backoff = FIRST_BACKOFF; result.status === 'retryable' && attempt < ATTEMPTS && !this.closed; attempt++, backoff *= 1.5) {
      const wait = result.retryInMillis ?? Math.min(backoff * (0.8 + Math.random() * 0.4), MAX_BACKOFF)
      if (wait > deadline - Date.now()) break
      await sleep(wait)
      result = await this.attempt(message, deadline)
    }
    return result
  }

  private async attempt (message: string, deadline: number): Promise<ExportResponse> {
    const result = await this.post(message, deadline)
    return result === STALE ? await this.post(message, deadline) as ExportResponse : result
  }

  /** Closes the connection; an export under way ends at once, and is not tried again. */
  shutdown (): void {
    this.closed = true
    this.socket?.destroy()
  }

  private async requestHead (): Promise<string> {
    const headers: Record<string, string> = { ...await this.options.headers(), 'User-Agent': 'plant-store' }
    if (this.options.compression === 'gzip') headers['Content-Encoding'] = 'gzip'
    let head = `POST ${this.url.pathname}${this.url.search} HTTP/1.1\r\nHost: ${this.url.host}\r\n`
    for (const [name, value] of Object.entries(headers)) {
      // Throws on a name or value that would break the request (a line break in OTEL_EXPORTER_OTLP_HEADERS).
      validateHeaderName(name)
      validateHeaderValue(name, value)
      head += `${name}: ${value}\r\n`
    }
    return head
  }

  private post (message: string, deadline: number): Promise<ExportResponse | typeof STALE> {
    return new Promise((resolve) => {
      const reused = this.socket !== undefined
      const socket = this.socket ?? this.open()
      const reader = new AnswerReader()
      let answered = false
      const finish = (result: ExportResponse | typeof STALE, keep = false) => {
        clearTimeout(timer)
        this.exchange = undefined
        if (keep) socket.unref()
        else this.close(socket)
        resolve(result)
      }
      const timer = setTimeout(() => finish({ status: 'retryable', error: new Error('Request timed out') }), Math.max(deadline - Date.now(), 0))
      this.exchange = {
        data: (chunk) => {
          answered = true
          try {
            const answer = reader.push(chunk)
            // An answer that came before the whole export was written (a 413, say) leaves the rest
            // of it on its way: the connection cannot carry another.
            if (answer !== undefined) finish(outcome(answer), answer.keepAlive && socket.writableLength === 0)
          } catch (error) {
            finish({ status: 'failure', error: error as Error })
          }
        },
        end: () => {
          const answer = reader.end()
          if (answer !== undefined) finish(outcome(answer))
          else finish(reused && !answered && !this.closed ? STALE : { status: 'retryable', error: new Error('the collector closed the connection before it answered') })
        },
        error: (error) => { finish(reused && !answered ? STALE : { status: 'retryable', error }) }
      }
      socket.ref()
      socket.write(message, 'latin1')
    })
  }

  private open (): Socket {
    /* c8 ignore next -- port 80 when the URL names none: no test listens there */
    const port = this.url.port === '' ? 80 : Number(this.url.port)
    const socket = connect({ host: this.url.hostname.replace(/^\[|\]$/g, ''), port, noDelay: true })
    // Between exports as well: a collector that closes an idle connection costs nothing but the connection.
    socket.on('data', (chunk: Buffer) => this.exchange?.data(chunk))
    socket.on('end', () => this.exchange?.end())
    socket.on('error', (error) => this.exchange?.error(error))
    socket.on('close', () => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.exchange?.end()
    })
    this.socket = socket
    return socket
  }

  private close (socket: Socket): void {
    if (this.socket === socket) this.socket = undefined
    socket.destroy()
  }
}

function outcome (answer: CollectorAnswer): ExportResponse {
  if (answer.status < 300) return { status: 'success', data: answer.body }
  if (RETRYABLE_STATUS.has(answer.status)) return { status: 'retryable', retryInMillis: retryAfter(answer.retryAfter ?? null) }
  return { status: 'failure', error: new OTLPExporterError(answer.reason, answer.status, answer.body.toString()) }
}
