// Tracing's cost: Plant Store untraced, with 10% of requests sampled, and with every
// request sampled, the traced ones exporting OTLP/HTTP to a sink on loopback.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

// Protobuf writes an attribute's key as its UTF-8 bytes, and only request spans carry this one.
const ROUTE_KEY = Buffer.from('http.route')

/** Each setting's environment, exporting under `/<name>/` of the sink's URL. */
export const SAMPLINGS: Array<[string, (sink: string, name: string) => Record<string, string>]> = [
  ['untraced', () => ({})],
  ['10% sampled', (sink, name) => ({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink}/${name}/v1/traces`, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1'
  })],
  // The default sampler, parentbased_always_on.
  ['every request sampled', (sink, name) => ({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink}/${name}/v1/traces` })]
]

export interface OtlpSink {
  url: string
  /** Request spans received under `/<name>/`. */
  spans: (name: string) => number
  close: () => Promise<void>
}

/** An OTLP/HTTP collector that takes every export and keeps nothing: a traced server's cost is its own work. */
export async function otlpSink (): Promise<OtlpSink> {
  const spans = new Map<string, number>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks)
      const name = (request.url ?? '').split('/')[1]
      let count = 0
      for (let at = body.indexOf(ROUTE_KEY); at !== -1; at = body.indexOf(ROUTE_KEY, at + 1)) count++
      spans.set(name, (spans.get(name) ?? 0) + count)
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: (name) => spans.get(name) ?? 0,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
