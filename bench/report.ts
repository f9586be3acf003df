// Markdown tables of medians and ratios, and the sections of bench/results.md.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import type { Result } from './load.js'

export const fmt = (n: number, digits = 0): string => Number.isFinite(n)
  ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  : '–'

/** The 1-minute load average above which other work shares the cores, and a run's figures are not figures. */
export const LOAD_LIMIT = 1.5
// Taken as the bench starts (this module is among its first imports), before its own work.
const startLoad = loadavg()[0]
const busy = startLoad > LOAD_LIMIT
const allowLoad = process.env.BENCH_ALLOW_LOAD === '1'
const LOAD_LINE = '- load average (1 min):'
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

/**
 * The lines every section starts with: the command, the date, the Node.js version, the
 * commit, and the load average at the start (finishRun adds the end's); a run that started
 * on a busy machine is marked not comparable.
 */
export function runFacts (command: string, commit = commitOf('.')): string[] {
  const options = Object.entries(process.env).filter(([key]) => key.startsWith('BENCH_')).map(([key, value]) => `${key}=${value ?? ''} `)
  const pg = (process.env.PLANT_STORE_TEST_PG_URL ?? '') === '' ? '' : 'PLANT_STORE_TEST_PG_URL=… '
  if (busy) {
    process.stderr.write(`bench: the load average was ${fmt(startLoad, 2)} at the start, above ${LOAD_LIMIT}: other work shares the cores. ` +
      (allowLoad
        ? 'BENCH_ALLOW_LOAD=1: the figures will be written to bench/results.md marked not comparable.\n'
        : 'The figures will be printed, not written to bench/results.md (BENCH_ALLOW_LOAD=1 writes them marked not comparable).\n'))
  }
  return [
    ...busy ? [`**Not comparable**: the load average was ${fmt(startLoad, 2)} at the start, above ${LOAD_LIMIT}: other work shared the cores.`, ''] : [],
    `- command: \`${pg}${options.join('')}${command}\``, `- date: ${new Date().toISOString().slice(0, 10)}`, `- Node.js: ${process.version}`, `- commit: ${commit}`,
    `${LOAD_LINE} ${fmt(startLoad, 2)} at the start`
  ]
}

/**
 * Prints the run's lines and writes them as `heading`'s section of `file`, unless the run
 * started on a busy machine (LOAD_LIMIT) without BENCH_ALLOW_LOAD=1: then it says why not.
 * The load at the end is the bench's own as much as anything's (it keeps both cores busy).
 */
export function finishRun (file: string, heading: string, lines: string[]): void {
  const at = lines.findIndex((line) => line.startsWith(LOAD_LINE))
  lines[at] += `, ${fmt(loadavg()[0], 2)} at the end`
  process.stdout.write(`${lines.join('\n')}\n`)
  const took = `bench: done in ${Math.round(performance.now() / 1000)} s`
  if (busy && !allowLoad) {
    process.stderr.write(`${took}; NOT written to bench/results.md: the load average was ${fmt(startLoad, 2)} at the start, above ${LOAD_LIMIT}, ` +
      'so other work shared the cores and these figures cannot be set beside another run\'s. Rerun with nothing else running ' +
      '(a minute after the last heavy work), or with BENCH_ALLOW_LOAD=1 to write them marked not comparable.\n')
    return
  }
  writeSection(file, heading, lines)
  process.stderr.write(`${took}, written to bench/results.md${busy ? ' marked not comparable' : ''}\n`)
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
