import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  exports: number
  bytes: number
  /** Spans with an `http.route`: the request spans (nothing else in the bench has one). */
  requestSpans: number
}

export interface OtlpSink {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  /** Exports received, and their bytes: all of them, or those posted under `/<prefix>/`. */
  received: (prefix?: string) => Received
  close: () => Promise<void>
}

// Protobuf writes an attribute's key as its UTF-8 bytes: counting the key counts the spans that have it.
const ROUTE_KEY = Buffer.from('http.route')

/**
 * An OTLP/HTTP collector that takes every export and keeps nothing: what a
 * traced server costs is its own work, not the collector's. Each server may post
 * under a path of its own (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=<url>/<prefix>/v1/traces).
 */
export async function otlpSink (): Promise<OtlpSink> {
  const byPrefix = new Map<string, Received>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const prefix = (req.url as string).split('/')[1]
      const received = byPrefix.get(prefix) ?? byPrefix.set(prefix, { exports: 0, bytes: 0, requestSpans: 0 }).get(prefix) as Received
      received.exports++
      received.bytes += body.length
      for (let at = body.indexOf(ROUTE_KEY); at !== -1; at = body.indexOf(ROUTE_KEY, at + ROUTE_KEY.length)) received.requestSpans++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: (prefix) => [...byPrefix].filter(([key]) => prefix === undefined || key === prefix).reduce(
      (sum, [, r]) => ({ exports: sum.exports + r.exports, bytes: sum.bytes + r.bytes, requestSpans: sum.requestSpans + r.requestSpans }),
      { exports: 0, bytes: 0, requestSpans: 0 }),
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
