import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { CHECK_EVERY } from '../src/store/ready-check.js'
import { TOKEN } from './helpers/build.js'
import { connect, freshPostgresUrl, PG_SKIP } from './helpers/postgres.js'
import { skipUnless } from './helpers/requires.js'
import { exited, startServer, type RunningServer } from './helpers/server.js'

// Node ignores SIGXFSZ, so a refused write is an error, not a signal; the coverage loader
// the child runs under re-raises the signals it watches unless another listener is there.
const IGNORE_SIGXFSZ = ['--import', 'data:text/javascript,process.on("SIGXFSZ", () => {})']

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

// util-linux's prlimit changes the limits of a running process.
const PRLIMIT = spawnSync('prlimit', ['--version']).error === undefined
  ? undefined
  : 'prlimit (util-linux) is not installed: it sets the file-size limit of the running server'

/**
 * Sets the soft file-size limit (RLIMIT_FSIZE) of a running process. At 1 byte the
 * kernel refuses every write(2) of the database and its WAL, at the point where a
 * full disk refuses one: SQLite fails the transaction with SQLITE_IOERR_WRITE (a
 * write cut short gives SQLITE_FULL, as ENOSPC does) and rolls it back, as it would
 * on a full disk. (PRAGMA max_page_count is a count SQLite keeps itself: no write(2)
 * ever fails.) The server's stdout is a pipe, so its log still flows.
 */
function limitFileSize (pid: number, bytes: number | 'unlimited'): void {
  execFileSync('prlimit', ['--pid', String(pid), `--fsize=${bytes}:unlimited`])
}

/**
 * What a full disk must look like from outside, whichever the store (`name`, as its log lines
 * say it): once `fill` has run, creates get 503 with Retry-After while reads answer and /ready is
 * 503, still after a poll of the webhook sender and a read of the metrics, and so do changes; once `free` has run,
 * creates and changes succeed again; one log line when the outage starts and one when it ends, no error line.
 * Creates 1, 5 and 6 get a 200; 2, 3, 4 and 7 a 503.
 */
async function fullDisk (t: Test, server: RunningServer, name: string, fill: () => unknown, free: () => unknown): Promise<void> {
  const post = (id: number) => fetch(`${server.url}/plants`, { method: 'POST', headers, body: JSON.stringify({ id, name: `plant ${id}` }) })
  const patch = (id: number, name: string) => fetch(`${server.url}/plants/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ name }) })
  const ready = async () => (await fetch(`${server.url}/ready`)).status

  t.equal((await post(1)).status, 200)
  t.equal(await ready(), 200)

  await fill()
  for (const id of [2, 3, 4]) {
    const response = await post(id)
    t.equal(response.status, 503, `create ${id}: 503`)
    t.match(response.headers.get('retry-after'), /^[1-9][0-9]*$/, 'with Retry-After')
    t.match(await response.json(), { error: 503, message: /unavailable/ })
    t.equal((await fetch(`${server.url}/plants/1`, { headers })).status, 200, 'reads answer')
    t.equal(await ready(), 503, '/ready is 503: the store cannot be written')
    const change = await patch(1, `renamed ${id}`)
    t.equal(change.status, 503, 'a change: 503 as a create')
    t.match(change.headers.get('retry-after'), /^[1-9][0-9]*$/, 'with Retry-After')
  }
  t.same(await (await fetch(`${server.url}/plants/1`, { headers })).json(), { name: 'plant 1' }, 'no refused change was applied')
  // Past a poll of the webhook sender (every second): its claim finds nothing due and writes
  // nothing, which must not end the outage (a second pair of lines when it did); nor must the
  // metrics' read of the webhook backlog.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.equal((await fetch(`${server.url}/metrics`, { headers })).status, 200, 'metrics are read')
  t.equal((await post(7)).status, 503, 'still refused after the sender has polled')

  await free()
  t.equal((await post(5)).status, 200, 'room again: a create succeeds')
  t.equal((await patch(1, 'renamed')).status, 200, 'and a change')
  t.equal(await ready(), 200)
  t.equal((await post(6)).status, 200)
  server.child.kill('SIGTERM')
  t.equal((await exited(server)).code, 0)

  const lines = server.stdout().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
  const outage = lines.filter((line) => line.msg.startsWith(name)).map((line) => [line.level, line.msg])
  t.same(outage, [
    [40, `${name} is unavailable: requests get 503 until it answers again`],
    [30, `${name} answers again`]
  ], 'one line when the outage starts, one when it ends, whatever the requests meanwhile')
  t.notOk(lines.some((line) => line.level >= 50), 'no error line')
}

t.test('sqlite: a full disk gives 503s and /ready 503 while reads answer, logged once each way, and nothing refused is stored', { skip: PRLIMIT }, async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${path}` }, IGNORE_SIGXFSZ)
  const pid = server.child.pid as number
  await fullDisk(t, server, 'SQLite', () => limitFileSize(pid, 1), () => limitFileSize(pid, 'unlimited'))

  const db = new Database(path, { readonly: true })
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT id FROM plants ORDER BY id').pluck().all(), [1, 5, 6], 'what got a 200 is stored, what got a 503 is not')
})

/** Whether this process may mount a tmpfs (root, as in CI): tried once on a folder of its own. */
function canMount (): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-mount-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]).status === 0
  if (mounted) spawnSync('umount', [dir])
  rmdirSync(dir)
  return mounted
}
const TMPFS = skipUnless(canMount(), 'a tmpfs cannot be mounted here (mount -t tmpfs needs root)')

/** Writes zeros to `path` until the file system has no room left. */
function fillDisk (path: string): void {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(4096)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

t.test('sqlite on a full 2 MiB tmpfs: /ready is 503 while plants do not fit, though its own one-row probe would, and 200 once there is room', { skip: TMPFS }, async (t) => {
  // Outside tap's fixture folder, which tap removes before the teardowns run.
  const disk = mkdtempSync(join(tmpdir(), 'plant-store-disk-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk])
  // Lazily: the server's teardown, which ends it, may come after this one.
  t.teardown(() => {
    execFileSync('umount', ['-l', disk])
    rmdirSync(disk)
  })
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(disk, 'plants.db')}` })
  // The largest plant there is: 1,000 and 500 characters of four bytes each, about 6 kB.
  const post = (id: number) => fetch(`${server.url}/plants`, { method: 'POST', headers, body: JSON.stringify({ id, name: '\u{1F33F}'.repeat(1000), tag: '\u{1F331}'.repeat(500) }) })
  const ready = async () => (await fetch(`${server.url}/ready`)).status

  t.equal((await post(1)).status, 200)
  t.equal(await ready(), 200)
  fillDisk(join(disk, 'filler'))

  let id = 2
  let refused: Response | undefined
  for (; id < 1000 && refused === undefined; id++) {
    const response = await post(id)
    if (response.status !== 200) refused = response
    else await response.arrayBuffer()
  }
  t.equal(refused?.status, 503, `create ${id - 1}: 503 once the disk is full`)
  t.match(await refused?.json(), { error: 503 })
  // Room for the probe's one-row rewrite, not for a plant of 6 kB (its pages, its tag's index entry, their WAL frames).
  truncateSync(join(disk, 'filler'), statSync(join(disk, 'filler')).size - 8 * 1024)
  for (let i = 0; i < 5; i++) t.equal(await ready(), 503, '/ready is 503: plants cannot be written')
  t.equal((await post(id++)).status, 503, 'and creates still are')
  t.equal((await fetch(`${server.url}/plants/1`, { headers })).status, 200, 'reads answer')

  rmSync(join(disk, 'filler'))
  // /ready answers its last check for up to a second (CHECK_EVERY): then it finds the room.
  const freed = Date.now()
  let status = await ready()
  while (status !== 200 && Date.now() - freed < 3 * CHECK_EVERY) status = await sleep(50).then(ready)
  t.equal(status, 200, 'room again: /ready is 200')
  const again = id++
  t.equal((await post(again)).status, 200, 'and a create succeeds')
  t.equal((await fetch(`${server.url}/plants/${again}`, { headers })).status, 200, 'it is stored')
  t.equal(await ready(), 200)
})

// PostgreSQL's own full disk is not made here: the server is shared and its data lives on the machine's
// own disk (a tablespace on a small tmpfs would need mount rights and the server's own user). What the
// store meets is made instead, in the test's own database: a row trigger on each of its tables fails every
// row written with SQLSTATE 53100 (disk_full), as a full disk fails a write that needs a new page, while a
// statement that changes no row (a claim that finds nothing due) succeeds, as it does on a full disk.
const DISK_FULL_TABLES = ['plants', 'webhook_events', 'webhook_deliveries', 'webhook_endpoints']

t.test('postgres: writes refused as a full disk refuses them give 503s and /ready 503 while reads answer, logged once each way', { skip: PG_SKIP }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: url })
  const db = await connect(t, url)
  await db.query(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`)
  await fullDisk(t, server, 'PostgreSQL', async () => {
    for (const table of DISK_FULL_TABLES) await db.query(`CREATE TRIGGER disk_full BEFORE INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION disk_full()`)
  }, async () => {
    for (const table of DISK_FULL_TABLES) await db.query(`DROP TRIGGER disk_full ON ${table}`)
  })
  t.same((await db.query('SELECT id::int FROM plants ORDER BY id')).rows.map((row) => row.id), [1, 5, 6], 'what got a 200 is stored, what got a 503 is not')
})
