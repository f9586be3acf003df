import { execFileSync, spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

let made = 0

/** A fresh database for one bench run; `drop` removes it. */
export async function freshDatabase (adminUrl: string): Promise<{ url: string, drop: () => Promise<void> }> {
  // A counter too: several made in one millisecond get names of their own.
  const name = `plant_store_bench_${process.pid}_${Date.now()}_${made++}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}

export function hasPgbench (): boolean {
  return spawnSync('pgbench', ['--version']).status === 0
}

/**
 * pgbench's TPS for the same single-row INSERT, same concurrency, on core 0 where taskset exists,
 * each row under a random bigint id (a client's own ids, not a sequence's: each insert lands anywhere in the key's index).
 */
export async function pgbenchTps (url: string, clients: number, seconds: number, taskset: boolean): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('CREATE TABLE pgbench_plants (id BIGINT PRIMARY KEY, name TEXT NOT NULL, tag TEXT)')
  await client.end()
  const script = join(tmpdir(), `plant-store-pgbench-${process.pid}.sql`)
  writeFileSync(script, "\\set id random(1, 9223372036854775807)\nINSERT INTO pgbench_plants (id, name, tag) VALUES (:id, 'bench plant', 'bench');\n")
  const args = ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, url]
  try {
    const out = taskset
      ? execFileSync('taskset', ['-c', '0', 'pgbench', ...args], { encoding: 'utf8' })
      : execFileSync('pgbench', args, { encoding: 'utf8' })
    return Number(/tps = ([\d.]+)/.exec(out)?.[1])
  } finally {
    rmSync(script, { force: true })
  }
}
