// Markdown tables of medians and ratios, and the sections of bench/results.md.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { Result } from './load.js'

export const fmt = (n: number, digits = 0): string => Number.isFinite(n)
  ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  : '–'

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const perRound = (a: Result[], b: Result[], ratio: (a: Result, b: Result) => number): number =>
  median(a.map((result, round) => ratio(result, b[round])))

/** How many times b's requests per second a makes: the median of the rounds' ratios. */
export const rateRatio = (a: Result[], b: Result[]): number => perRound(a, b, (x, y) => x.rate / y.rate)

/** How many times b's requests per CPU-second a makes: b's CPU per request over a's, the median of the rounds' ratios. */
export const cpuRatio = (a: Result[], b: Result[]): number => perRound(a, b, (x, y) => (y.cpuUs ?? NaN) / (x.cpuUs ?? NaN))

export const medianRate = (results: Result[]): string => fmt(median(results.map((r) => r.rate)))
export const medianCpu = (results: Result[]): string => fmt(median(results.map((r) => r.cpuUs ?? NaN)), 1)

/** One row's figures over its rounds: the median req/s and CPU µs/req, and the failures summed. */
export function figures (results: Result[]): string[] {
  return [medianRate(results), medianCpu(results), fmt(results.reduce((sum, r) => sum + r.failed, 0))]
}

/** A Markdown table: the first `text` columns left-aligned, the rest (figures) right-aligned. */
export function table (header: string[], rows: string[][], text = 2): string[] {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`
  return [line(header), `|${header.map((_, i) => i < text ? '---' : '---:').join('|')}|`, ...rows.map(line)]
}

/** The lines every section starts with: the command, the date, the Node.js version, the commit. */
export function runFacts (command: string, commit = commitOf('.')): string[] {
  const options = Object.entries(process.env).filter(([key]) => key.startsWith('BENCH_')).map(([key, value]) => `${key}=${value ?? ''} `)
  const pg = (process.env.PLANT_STORE_TEST_PG_URL ?? '') === '' ? '' : 'PLANT_STORE_TEST_PG_URL=… '
  return [`- command: \`${pg}${options.join('')}${command}\``, `- date: ${new Date().toISOString().slice(0, 10)}`, `- Node.js: ${process.version}`, `- commit: ${commit}`]
}

/** The checkout's commit, marked `-dirty` when its files differ from it (results.md aside: the bench writes it). */
export function commitOf (dir: string): string {
  const git = (...args: string[]): string => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim()
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results.md') !== ''
  return `${git('rev-parse', '--short=7', 'HEAD')}${dirty ? '-dirty' : ''}`
}

const INTRO = '# Benchmark results\n\nThe last run of each command. What they measure and how to read them: [docs/performance.md](../docs/performance.md).\n'

/** Replaces the section of bench/results.md under `heading` with `lines`, keeping the other command's. */
export function writeSection (file: string, heading: string, lines: string[]): void {
  const sections = (existsSync(file) ? readFileSync(file, 'utf8') : INTRO).split(/^(?=## )/m)
  const section = [heading, '', ...lines].join('\n')
  const at = sections.findIndex((s) => s.startsWith(`${heading}\n`))
  if (at === -1) sections.push(section)
  else sections[at] = section
  writeFileSync(file, `${sections.map((s) => s.trimEnd()).join('\n\n')}\n`)
}
