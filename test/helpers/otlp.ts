import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import type { Test } from 'tap'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  service: unknown
}

export interface OtlpReceiver {
  /** The base endpoint: OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  /** The spans of every JSON export received so far, flattened. */
  spans: ReceivedSpan[]
  /** Every export as it arrived: its path, headers, body as sent (gzipped or not), and when it had arrived (performance.now()). */
  requests: Array<{ path: string, headers: IncomingHttpHeaders, body: Buffer, at: number }>
}

type AnyValue = { stringValue?: string, intValue?: string | number, boolValue?: boolean, doubleValue?: number }
const valueOf = (value: AnyValue): unknown => value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue ?? value.doubleValue)
const attributes = (list: Array<{ key: string, value: AnyValue }> = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]))

/**
 * An OTLP/HTTP collector of the test's own on 127.0.0.1: it answers every
 * export with `status` (or what it says at the time) and keeps what it received; JSON exports are decoded (gunzipped first when gzipped).
 */
export async function otlpReceiver (t: Test, status: number | (() => number) = 200): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const requests: OtlpReceiver['requests'] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      requests.push({ path: req.url as string, headers: req.headers, body, at: performance.now() })
      if (req.headers['content-type'] === 'application/json') {
        const json = req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body
        for (const resourceSpans of JSON.parse(json.toString()).resourceSpans) {
          const service = attributes(resourceSpans.resource.attributes)['service.name']
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({ ...span, parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId, attributes: attributes(span.attributes), service })
            }
          }
        }
      }
      res.writeHead(typeof status === 'number' ? status : status(), { 'content-type': req.headers['content-type'] ?? 'application/json' }).end(req.headers['content-type'] === 'application/json' ? '{}' : '')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, requests }
}
