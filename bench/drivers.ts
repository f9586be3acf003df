// npm run bench:drivers: the client-side CPU that each PostgreSQL driver spends on the
// statements the store sends, pg (today's) against postgres (porsager's), in one run.
// Written to its own section of bench/results.md.
import { randomFillSync, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import postgres from 'postgres'
import { stringifyNewPlant } from '../src/json/new-plant.js'
import { openStore } from '../src/store/index.js'
import { fillStore } from './big-store.js'
import { freshDatabase } from './pgbench.js'
import { fmt, machine, median, writeSection } from './report.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const PG_URL = process.env.PLANT_STORE_TEST_PG_URL
const PLANTS = 100_000
// As the service by default: DATABASE_POOL_SIZE, DATABASE_TIMEOUT, and the store's MAX_IN_FLIGHT batches.
const POOL = 10
const TIMEOUT = 5000
const IN_FLIGHT = 2
const GETS_IN_FLIGHT = 50
const here = fileURLToPath(new URL('.', import.meta.url))
const started = performance.now()
const loadAtStart = loadavg()[0]
if (PG_URL === undefined || PG_URL === '') throw new Error('PLANT_STORE_TEST_PG_URL: set it to a PostgreSQL URL (a database is made there and dropped)')

interface Statement { name: string, text: string }
interface Driver { name: string, insert: (values: unknown[]) => Promise<unknown>, query: (s: Statement, values: unknown[]) => Promise<Array<Record<string, unknown>>>, end: () => Promise<void> }

/** The named statements the store itself sends, heard on pg while it creates one plant, gets it and reads the first page. */
async function storeStatements (url: string): Promise<Map<string, string>> {
  const heard = new Map<string, string>()
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const { name, text } = (config ?? {}) as Partial<Statement>
    if (name !== undefined && text !== undefined) heard.set(name, text)
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest)
  } as typeof query
  try {
    const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: TIMEOUT })
    await store.create({ id: BigInt(PLANTS) + 1n, name: 'bench plant', tag: 'bench' })
    await store.get(1n)
    await store.list({ limit: 21 })
    await store.close()
  } finally {
    pg.Client.prototype.query = query
  }
  return heard
}

function pgDriver (url: string, insert: Statement): Driver {
  // The service's pool options (src/store/postgres/index.ts): query_timeout arms a timer per statement.
  const pool = new pg.Pool({ connectionString: url, max: POOL, connectionTimeoutMillis: TIMEOUT, statement_timeout: TIMEOUT, query_timeout: TIMEOUT + 1000, keepAlive: true })
  return {
    name: 'pg',
    // A batch takes its connection, then sends its statement on it, as the store's commit does.
    async insert (values) {
      const client = await pool.connect()
      try {
        return (await client.query({ ...insert, values })).rows
      } finally {
        client.release()
      }
    },
    async query (statement, values) { return (await pool.query({ ...statement, values })).rows },
    end: () => pool.end()
  }
}

function postgresDriver (url: string, insert: Statement): Driver {
  // int8 has no parser in postgres's defaults, so ids (and count(*)) come back as text, as from pg: checked below.
  const sql = postgres(url, { max: POOL, prepare: true, connect_timeout: TIMEOUT / 1000, connection: { statement_timeout: TIMEOUT }, onnotice: () => {} })
  return {
    name: 'postgres',
    // reserve(): the batch's own connection, as above.
    async insert (values) {
      const reserved = await sql.reserve()
      try {
        return await reserved.unsafe(insert.text, values as never[], { prepare: true })
      } finally {
        reserved.release()
      }
    },
    query: (statement, values) => sql.unsafe(statement.text, values as never[], { prepare: true }),
    end: () => sql.end()
  }
}

/** `count` batches of `size` new plants each, in the store's INSERT parameters: random positive int64 ids as text, ascending, and their webhook bodies. */
function newBatches (count: number, size: number): unknown[][] {
  const instance = randomUUID()
  return Array.from({ length: count }, () => {
    const ids = [...randomFillSync(new BigUint64Array(size))].map((x) => x >> 1n).sort((a, b) => (a < b ? -1 : 1))
    const plants = ids.map((id) => ({ id, name: 'bench plant', tag: 'bench' }))
    return [ids.map(String), plants.map((p) => p.name), plants.map((p) => p.tag), plants.map(stringifyNewPlant), instance]
  })
}

/** A ring of `size` distinct ids of the filled plants, as decimal text: the gets of one turn. */
function idRing (size: number): string[][] {
  return Array.from({ length: 1024 }, () => {
    const ids = new Set<string>()
    while (ids.size < size) ids.add(String(1 + Math.floor(Math.random() * PLANTS)))
    return [...ids]
  })
}

interface Workload { name: string, rows: number, inFlight: number, op: (driver: Driver) => () => Promise<unknown>, ready?: (count: number) => void }
interface Figures { perSecond: number, cpuUs: number }

/** Statements per second and the process's CPU µs per statement, `inFlight` outstanding at once for `seconds`. */
async function measure (op: () => Promise<unknown>, inFlight: number, seconds: number): Promise<Figures> {
  let done = 0
  const cpu = process.cpuUsage()
  const from = performance.now()
  const until = from + seconds * 1000
  await Promise.all(Array.from({ length: inFlight }, async () => { while (performance.now() < until) { await op(); done++ } }))
  const elapsed = (performance.now() - from) / 1000
  const { user, system } = process.cpuUsage(cpu)
  return { perSecond: done / elapsed, cpuUs: (user + system) / done }
}

const db = await freshDatabase(PG_URL)
const drivers: Driver[] = []
const results = new Map<string, Figures[]>()
// Statements per second seen so far, by workload and driver: how many batches of creates to make before a window.
const fastest = new Map<string, number>()
let workloads: Workload[] = []
let statements = new Map<string, string>()
try {
  // The service's migrations first (fillStore opens and closes the store), then the plants.
  await fillStore(db.url, PLANTS)
  statements = await storeStatements(db.url)
  const statement = (name: string): Statement => {
    const text = statements.get(name)
    if (text === undefined) throw new Error(`the store sent no statement named ${name}`)
    return { name, text }
  }
  const INSERT = statement('plant-store-insert-outbox')
  const BY_ID = statement('plant-store-select-many')
  const FIRST_PAGE = statement('plant-store-page-first')
  drivers.push(pgDriver(db.url, INSERT), postgresDriver(db.url, INSERT))

  // The creates' parameters are made before each window, so that their cost counts for neither driver.
  let batches: unknown[][] = []
  const creates = (size: number): Workload => ({
    name: `create, a batch of ${size}`,
    rows: size,
    inFlight: IN_FLIGHT,
    op: (driver) => () => driver.insert(batches.pop() ?? newBatches(1, size)[0]),
    ready: (count) => { batches = newBatches(count, size) }
  })
  const gets = (size: number): Workload => {
    const ring = idRing(size)
    let next = 0
    return { name: `get by id, ${size} id${size > 1 ? 's' : ''}`, rows: size, inFlight: GETS_IN_FLIGHT, op: (driver) => () => driver.query(BY_ID, [ring[next++ % ring.length]]) }
  }
  const page: Workload = { name: 'first page, limit 21', rows: 21, inFlight: GETS_IN_FLIGHT, op: (driver) => () => driver.query(FIRST_PAGE, [21]) }
  workloads = [creates(1), creates(25), gets(1), gets(20), page]

  // Ids come back as text from both: never a JS number, which loses int64 precision.
  for (const driver of drivers) {
    const [created] = await driver.insert(newBatches(1, 1)[0]) as Array<Record<string, unknown>>
    const [got] = await driver.query(BY_ID, [['1']])
    if (typeof created.id !== 'string' || typeof created.notified !== 'string' || typeof got.id !== 'string') throw new Error(`${driver.name}: int8 does not come back as text`)
  }

  const window = async (workload: Workload, driver: Driver, seconds: number): Promise<Figures> => {
    const key = `${workload.name} ${driver.name}`
    workload.ready?.(Math.ceil((fastest.get(key) ?? 2000) * seconds * 1.5) + 100)
    const figures = await measure(workload.op(driver), workload.inFlight, seconds)
    fastest.set(key, Math.max(fastest.get(key) ?? 0, figures.perSecond))
    return figures
  }
  // Warm-up: every connection opened and its statements prepared, the code optimised.
  for (const workload of workloads) for (const driver of drivers) await window(workload, driver, Math.min(SECONDS, 1))
  for (const workload of workloads) for (const driver of drivers) results.set(`${workload.name} ${driver.name}`, [])
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of workloads) {
      for (const driver of round % 2 === 0 ? drivers : [...drivers].reverse()) results.get(`${workload.name} ${driver.name}`)?.push(await window(workload, driver, SECONDS))
    }
  }
} finally {
  for (const driver of drivers) await driver.end()
  await db.drop()
}

const version = (name: string): string => (JSON.parse(readFileSync(join(here, '..', '..', 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
const figures = (workload: Workload, driver: string): Figures[] => results.get(`${workload.name} ${driver}`) ?? []
const quote = (name: string): string => `\`${(statements.get(name) ?? '').replace(/\s+/g, ' ')}\``
const lines = [
  `- command: \`PLANT_STORE_TEST_PG_URL=… npm run bench:drivers\` (BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS})`,
  `- date: ${new Date().toISOString()}; whole run ${fmt((performance.now() - started) / 1000)} s`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- drivers: pg ${version('pg')} (named statements, the service's pool options), postgres ${version('postgres')} (\`prepare: true\`, int8 as text); ` +
    `${POOL} connections each; a batch of creates takes its own connection (pg \`pool.connect()\`, postgres \`sql.reserve()\`), ${IN_FLIGHT} batches in flight ` +
    `as the store's group commit (no webhook endpoint subscribed); reads ${GETS_IN_FLIGHT} in flight on the pool.`,
  '- statements: the store\'s own, heard on pg as it sent them: its batch INSERT `plant-store-insert-outbox` (src/store/postgres/outbox.ts: the plants and their webhook outbox rows, ' +
    'one statement; ids random positive int64 as text, ascending); ' +
    `${quote('plant-store-select-many')}; ${quote('plant-store-page-first')}; on a fresh database migrated by the store with ${fmt(PLANTS)} plants.`,
  '- CPU µs/statement is this Node process\'s own `process.cpuUsage()` over each window, divided by the statements it completed: PostgreSQL\'s own CPU is not included. ' +
    `${ROUNDS} rounds of ${SECONDS} s per driver and workload after a warm-up, the drivers' order flipping every round; medians, and the median of each round's postgres ÷ pg.`,
  '',
  '| workload | rows/statement | pg statements/s | postgres statements/s | pg CPU µs/statement | postgres CPU µs/statement | CPU postgres ÷ pg | each round |',
  '|---|---:|---:|---:|---:|---:|---:|---|',
  ...workloads.map((workload) => {
    const [a, b] = [figures(workload, 'pg'), figures(workload, 'postgres')]
    const ratios = a.map((r, i) => b[i].cpuUs / r.cpuUs)
    return `| ${workload.name} | ${workload.rows} | ${fmt(median(a.map((r) => r.perSecond)))} | ${fmt(median(b.map((r) => r.perSecond)))} | ` +
      `${fmt(median(a.map((r) => r.cpuUs)), 1)} | ${fmt(median(b.map((r) => r.cpuUs)), 1)} | ${fmt(median(ratios), 2)} | ${ratios.map((r) => fmt(r, 2)).join(', ')} |`
  })
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench:drivers`', lines)
process.stdout.write(`${lines}\n`)
