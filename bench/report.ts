import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import type { LoadResult } from './load.js'

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

export function machine (): string {
  const cpu = cpus()
  return `${cpu.length} × ${cpu[0].model}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node.js ${process.version}`
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const LOAD_HEADER = 'req/s | × baseline | server CPU µs/req | p50 ms | p99 ms | errors | non-2xx'
export const LOAD_ALIGN = '---:|---:|---:|---:|---:|---:|---:'

export const FLOOR_HEADER = 'req/s | × floor | server CPU µs/req | CPU × floor | p50 ms | p99 ms | errors | non-2xx'
export const FLOOR_ALIGN = '---:|---:|---:|---:|---:|---:|---:|---:'

/** The load columns of one row against the floor measured in the same run: req/s over its req/s, its CPU per request over this row's. */
export function floorCells (result: LoadResult, floor: LoadResult): string {
  return `${fmt(result.requests)} | ${fmt(result.requests / floor.requests, 2)} | ${fmt(result.cpuUsPerRequest)} | ` +
    `${fmt(floor.cpuUsPerRequest / result.cpuUsPerRequest, 2)} | ${result.p50} | ${result.p99} | ${result.errors} | ${result.non2xx}`
}

/** The load columns of one row: its ratio to the baseline's same workload, measured in the same run. */
export function loadCells (result: LoadResult, baseline: LoadResult): string {
  return `${fmt(result.requests)} | ${fmt(result.requests / baseline.requests, 2)} | ${fmt(result.cpuUsPerRequest)} | ` +
    `${result.p50} | ${result.p99} | ${result.errors} | ${result.non2xx}`
}

/**
 * Writes `body` as the section of results.md that starts with `heading`, in place
 * of that section's last text, keeping the others: `npm run bench` and
 * `bench/compare` each keep their own section.
 */
export function writeSection (file: string, heading: string, body: string): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n'
  const sections = text.split(/^(?=## )/m)
  const section = `${heading}\n\n${body.trim()}`
  const at = sections.findIndex((s) => s.startsWith(`${heading}\n`))
  if (at === -1) sections.push(section)
  else sections[at] = section
  writeFileSync(file, `${sections.map((s) => s.trimEnd()).join('\n\n')}\n`)
}
