import type { FastifyInstance } from 'fastify'
import parse from 'parse-prometheus-text-format'
import { AUTH } from './build.js'

export type Families = ReturnType<typeof parse>
export type Sample = Families[number]['metrics'][number]

/**
 * Parses an exposition with a Prometheus text-format parser. That parser folds
 * every labelled series of a histogram into one (it groups buckets by `le`
 * alone), so a histogram is read as what it is on the wire: its `_bucket`,
 * `_sum` and `_count` series, each a family of its own.
 */
export function parseExposition (text: string): Families {
  const types = [...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1])
  if (types.length === 0) throw new Error('no histogram in the exposition')
  return parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))
}

/** GET /metrics, parsed. Fails on anything but a 200. */
export async function scrape (app: FastifyInstance, headers: Record<string, string> = AUTH): Promise<Families> {
  const response = await app.inject({ url: '/metrics', headers })
  if (response.statusCode !== 200) throw new Error(`GET /metrics: ${response.statusCode} ${response.body}`)
  return parseExposition(response.body)
}

/** The samples of one metric ([] when it has none); a histogram's series interleave, so gather them all. */
export function samples (families: Families, name: string): Sample[] {
  return families.filter((family) => family.name === name).flatMap((family) => family.metrics)
}

const key = (labels: Record<string, string> = {}) => JSON.stringify(Object.entries(labels).sort())

/** A counter's or gauge's value, the series with exactly these labels (0 when there is none). */
export function value (families: Families, name: string, labels: Record<string, string> = {}): number {
  return Number(samples(families, name).find((s) => key(s.labels) === key(labels))?.value ?? 0)
}

/** One series of a histogram: its count, sum and cumulative buckets by `le`. */
export function histogram (families: Families, name: string, labels: Record<string, string> = {}) {
  const buckets: Record<string, number> = {}
  for (const s of samples(families, `${name}_bucket`)) {
    const { le, ...rest } = s.labels ?? {}
    if (key(rest) === key(labels)) buckets[le] = Number(s.value)
  }
  return { count: value(families, `${name}_count`, labels), sum: value(families, `${name}_sum`, labels), buckets }
}
