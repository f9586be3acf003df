import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface OtlpSink {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  /** Exports received, and their bytes. */
  received: () => { exports: number, bytes: number }
  close: () => Promise<void>
}

/**
 * An OTLP/HTTP collector that takes every export and keeps nothing: what a
 * traced server costs is its own work, not the collector's.
 */
export async function otlpSink (): Promise<OtlpSink> {
  let exports = 0
  let bytes = 0
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => { bytes += chunk.length })
    req.on('end', () => {
      exports++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ exports, bytes }),
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
