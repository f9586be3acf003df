import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import t from 'tap'
import { bounded } from './helpers/bounded.js'
import { assertError, AUTH, build, getPlant, patchPlant, postPlant } from './helpers/build.js'

const TIMEOUT = 1000
const HELD = 4000

// Another process (a backup, an operator's sqlite3 shell) holds the write lock
// until told to let go on stdin.
const HOLDER = `
const Database = require('better-sqlite3')
const db = new Database(process.argv[1])
db.exec('BEGIN IMMEDIATE')
process.stdout.write('locked\\n')
process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0) })
`

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

t.test('a write lock held by another process: /health at once, creates 503 in time, writes again the moment it is released', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  // Load shedding on, as in production: a frozen event loop would have shed requests after the lock was gone.
  const app = await build(t, { DATABASE_URL: `sqlite:${path}`, DATABASE_TIMEOUT: String(TIMEOUT), MAX_EVENT_LOOP_DELAY: '1000' })
  t.equal((await postPlant(app, { id: 1, name: 'Before' })).statusCode, 200)

  const holder = spawn(process.execPath, ['-e', HOLDER, path], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] })
  // Listened for now: the holder may end before it is told to (if it fails), and an
  // 'exit' listened for only after the release would then never come.
  const holderExit = once(holder, 'exit')
  t.teardown(() => { holder.kill('SIGKILL') })
  await bounded(Promise.race([once(holder.stdout, 'data'), holderExit.then(([code]) => { throw new Error(`the holder exited with ${code} before it locked`) })]),
    30_000, 'the holder taking the write lock')

  // /health every 10 ms for as long as the lock is held: each answer's time is the event loop's freedom.
  const health: number[] = []
  const end = performance.now() + HELD
  const probing = (async () => {
    while (performance.now() < end) {
      const start = performance.now()
      t.equal((await app.inject('/health')).statusCode, 200)
      health.push(performance.now() - start)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()

  const creates: number[] = []
  let id = 100
  while (performance.now() < end - TIMEOUT - 300) {
    const start = performance.now()
    const [one, two, change] = await Promise.all([postPlant(app, { id: id++, name: 'Locked out' }), postPlant(app, { id: id++, name: 'Locked out' }),
      patchPlant(app, 1, { name: 'Locked out' })])
    creates.push(performance.now() - start)
    for (const response of [one, two, change]) {
      assertError(t, response, 503, /unavailable/)
      t.equal(response.headers['retry-after'], '2', 'with Retry-After')
    }
  }
  assertError(t, await app.inject('/ready'), 503, /unavailable/)
  t.equal((await getPlant(app, 1)).statusCode, 200, 'reads go on (WAL)')
  const register = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: 'https://hooks.example.com/plants' } })
  assertError(t, register, 503, /unavailable/)
  t.equal(register.headers['retry-after'], '2', 'a webhook registration too, with Retry-After')
  await probing

  t.ok(creates.length >= 2, `${creates.length} rounds of creates and a change while locked`)
  t.ok(Math.max(...creates) < TIMEOUT + 300, `creates and changes answered 503 within DATABASE_TIMEOUT: at most ${Math.round(Math.max(...creates))} ms`)
  t.ok(health.length > 100, `${health.length} health checks`)
  t.ok(percentile(health, 0.99) < 50, `/health p99 ${percentile(health, 0.99).toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms`)

  holder.stdin.write('release\n')
  await bounded(holderExit, 30_000, 'the holder releasing the lock and exiting')
  const start = performance.now()
  const after = await postPlant(app, { id: 2, name: 'After' })
  t.equal(after.statusCode, 200, 'a create commits as soon as the lock is gone')
  t.ok(performance.now() - start < 200, `in ${Math.round(performance.now() - start)} ms`)
  t.equal((await app.inject('/ready')).statusCode, 200, 'and /ready is 200 again')
  for (let i = 0; i < 20; i++) t.equal((await postPlant(app, { id: 1000 + i, name: 'Later' })).statusCode, 200, 'nothing is shed')
  for (let i = 100; i < id; i++) t.equal((await getPlant(app, i)).statusCode, 404, `refused plant ${i} was not stored`)
  t.same((await getPlant(app, 1)).json(), { name: 'Before' }, 'no refused change was applied')
  t.same((await patchPlant(app, 1, { name: 'After' })).json(), { name: 'After' }, 'and a change commits again')
})
