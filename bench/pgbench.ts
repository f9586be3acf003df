// pgbench's single-row INSERT as a target: what PostgreSQL itself does with one
// statement per create from as many clients as the load has connections, with no
// HTTP and no Node.js. On core 0, as the load generator.
import { execFileSync, spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { CREATE, pinned } from './load.js'
import type { Target } from './rounds.js'

export const hasPgbench = spawnSync('pgbench', ['--version']).status === 0

// Random ids below 2^53, as the bench's creates send.
const SCRIPT = "\\set id random(1, 9007199254740991)\nINSERT INTO pgbench_plants (id, name, tag) VALUES (:id, 'bench plant', 'bench');\n"

export function pgbenchTarget (name: string, url: string): Target {
  const script = join(tmpdir(), `plant-store-pgbench-${process.pid}.sql`)
  const run = (seconds: number): string => {
    // -T counts the time its clients take to connect, which its tps leaves out: 2 s more for them.
    const args = ['-n', '-c', '50', '-j', '2', '-T', String(seconds + 2), '-f', script, url]
    return execFileSync(pinned ? 'taskset' : 'pgbench', pinned ? ['-c', '0', 'pgbench', ...args] : args, { encoding: 'utf8' })
  }
  return {
    name,
    serves: [CREATE.name],
    prepare: async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query('CREATE TABLE pgbench_plants (id BIGINT PRIMARY KEY, name TEXT NOT NULL, tag TEXT)')
      await client.end()
    },
    start: async () => {
      writeFileSync(script, SCRIPT)
      return {
        warmUp: async () => { run(1) },
        measure: async (_workload, seconds) => {
          const out = run(seconds)
          // No tps line when no transaction completed (its clients still connecting when the time ran out).
          const figure = (pattern: RegExp, none: number): number => Number(pattern.exec(out)?.[1] ?? none)
          return { rate: figure(/tps = ([\d.]+)/, NaN), ok: figure(/actually processed: (\d+)/, 0), failed: figure(/failed transactions: (\d+)/, 0) }
        },
        stop: async () => { rmSync(script, { force: true }) }
      }
    }
  }
}
