// The change feed's costs (npm run bench:feed), on SQLite, the built service on core 1:
// - catch-up: a backlog of FEED_EVENTS events (100,000) read in pages of 1000;
// - creates with the feed on, off (EVENTS_RETENTION=0), and on with one follower long-polling
//   at the head, in alternating rounds: server CPU per create at FEED_RATE creates per second
//   (3000), the same for each, so that the follower's own CPU (on the load's core) does not
//   change the load the server gets;
// - FEED_WAITERS long polls (1000) held open: the server's memory per waiting request, and
//   how long after a commit the first and the last of them are answered (the first bytes of
//   each answer, on connections read as bytes).
// BENCH_SECONDS per load (5), BENCH_ROUNDS (4).
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AUTH, CREATE, serviceCommand, startServer, stopServer, type Server } from './load.js'
import { cpuRatio, finishRun, fmt, median, medianCpu, medianRate, runFacts, table } from './report.js'
import { nodeTarget, runRounds, type Target } from './rounds.js'
import { freshDatabase, removeDatabases } from './stores.js'

const EVENTS = Number(process.env.FEED_EVENTS ?? 100_000)
const WAITERS = Number(process.env.FEED_WAITERS ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const RATE = Number(process.env.FEED_RATE ?? 3000)
const PACED = { ...CREATE, rate: RATE }
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const here = fileURLToPath(new URL('.', import.meta.url))
const root = join(here, '..', '..')
const command = serviceCommand(root)

interface Answer { status: number, body: string, link: string }

function get (base: string, path: string, agent?: Agent, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${base}${path}`, { headers: AUTH, agent, signal }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode as number, body, link: String(response.headers.link) }))
    }).on('error', reject).end()
  })
}

const nextOf = (answer: Answer): string => {
  const next = /^<([^>]+)>/.exec(answer.link)?.[1]
  if (answer.status !== 200 || next === undefined) throw new Error(`the feed answered ${answer.status}: ${answer.body.slice(0, 200)}`)
  return next
}

/** A feed link with `wait` set to `seconds`. */
function withWait (link: string, seconds: number): string {
  const url = new URL(link, 'http://x')
  url.searchParams.set('wait', String(seconds))
  return `${url.pathname}${url.search}`
}

const rss = (server: Server): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1]) * 1024

/** Reads the backlog of a database that holds EVENTS events: events per second. */
async function catchUp (): Promise<number> {
  const url = await freshDatabase('sqlite')
  await stopServer(await startServer(command, { DATABASE_URL: url }))
  // One bulk statement, as the bench fills its stores: the events creates write, without the creates.
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(url.slice('sqlite:'.length))
  db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO webhook_events (plant_id, type, body, created_at) SELECT i, 'plant.created', '{"id":"' || i || '","name":"plant ' || i || '","tag":"bench"}', ? FROM n`).run(EVENTS, Date.now())
  db.close()
  const server = await startServer(command, { DATABASE_URL: url })
  try {
    const started = performance.now()
    let read = 0
    for (let next = '/events?limit=1000'; ;) {
      const answer = await get(server.url, next)
      const count = (answer.body.match(/"type":/g) ?? []).length
      read += count
      if (count === 0) break
      next = nextOf(answer)
    }
    if (read !== EVENTS) throw new Error(`read ${read} events of ${EVENTS}`)
    return read / ((performance.now() - started) / 1000)
  } finally {
    await stopServer(server)
  }
}

/** A target whose instance has a follower reading the feed at its head, from this process, while it runs. */
function withFollower (target: Target): Target {
  return {
    ...target,
    start: async () => {
      const instance = await target.start()
      const url = instance.url as string
      const stop = new AbortController()
      let events = 0
      const following = (async () => {
        for (let next = nextOf(await get(url, '/events?after=now')); !stop.signal.aborted;) {
          const answer = await get(url, withWait(next, 30), undefined, stop.signal).catch(() => undefined)
          if (answer === undefined) return
          events += (answer.body.match(/"type":/g) ?? []).length
          next = nextOf(answer)
        }
      })().then(() => undefined, (error: Error) => error)
      return {
        ...instance,
        stop: async () => {
          stop.abort()
          const failed = await following
          if (failed !== undefined) throw failed
          if (events === 0) throw new Error('the follower saw no event')
          await instance.stop()
        }
      }
    }
  }
}

/**
 * A long poll on a connection of its own, written and read as bytes: when the answer's first
 * bytes arrive, and its text. No HTTP parser on this side, so that 1,000 answers arriving
 * at once are timed as the server sends them, not as this process gets through them.
 */
function rawPoll (server: Server, path: string): { sent: Promise<void>, answer: Promise<{ at: number, text: string }> } {
  const { hostname, port } = new URL(server.url)
  const socket = connect(Number(port), hostname)
  const sent = new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`, () => resolve())
  })
  const answer = new Promise<{ at: number, text: string }>((resolve, reject) => {
    socket.once('error', reject)
    let at = 0
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      at ||= performance.now()
      text += chunk.toString()
      // The whole answer: its headers, and a body that is one JSON array.
      if (!/\r\n\r\n[^]*\]$/.test(text)) return
      socket.destroy()
      resolve({ at, text })
    })
  })
  return { sent, answer }
}

/** WAITERS long polls at the head; then a create: ms until the first and the last is answered, and RSS per waiting request. */
async function waiters (): Promise<{ first: number[], last: number[], bytes: number }> {
  const server = await startServer(command, { DATABASE_URL: await freshDatabase('sqlite'), MAX_CONNECTIONS: String(2 * WAITERS), MAX_CONNECTIONS_PER_ADDRESS: String(2 * WAITERS) })
  const first: number[] = []
  const last: number[] = []
  let bytes = 0
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const next = nextOf(await get(server.url, '/events?after=now'))
      const before = rss(server)
      const answered: number[] = []
      const waiting = Array.from({ length: WAITERS }, () => rawPoll(server, withWait(next, 30)))
      const polls = waiting.map(async ({ answer }) => {
        const { at, text } = await answer
        answered.push(at)
        if (!text.includes('"type":')) throw new Error(`a waiter was answered without the event: ${text.slice(0, 300)}`)
      })
      await Promise.all(waiting.map(({ sent }) => sent))
      // Every request in and waiting: the server's memory has settled.
      await new Promise((resolve) => setTimeout(resolve, 3000))
      if (answered.length > 0) throw new Error(`${answered.length} waiters were answered before any commit`)
      bytes = Math.max(bytes, (rss(server) - before) / WAITERS)
      const committed = await new Promise<number>((resolve, reject) => {
        const body = `{"id":${round + 1},"name":"wake","tag":"bench"}`
        request(`${server.url}/plants`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' } }, (response) => {
          response.resume().on('end', () => response.statusCode === 200 ? resolve(performance.now()) : reject(new Error(`a create answered ${response.statusCode}`)))
        }).on('error', reject).end(body)
      })
      await Promise.all(polls)
      first.push(Math.min(...answered) - committed)
      last.push(Math.max(...answered) - committed)
      process.stderr.write(`bench: round ${round + 1}, ${WAITERS} waiters: first ${fmt(first.at(-1) as number, 1)} ms, last ${fmt(last.at(-1) as number, 1)} ms after the create's answer\n`)
    }
  } finally {
    await stopServer(server)
  }
  return { first, last, bytes }
}

const lines = runFacts('npm run bench:feed')
try {
  const rate = await catchUp()
  const on = nodeTarget('feed on', command, { DATABASE_URL: await freshDatabase('sqlite') })
  const off = nodeTarget('feed off (EVENTS_RETENTION=0)', command, { DATABASE_URL: await freshDatabase('sqlite'), EVENTS_RETENTION: '0' })
  const followed = withFollower(nodeTarget('feed on, one follower at the head', command, { DATABASE_URL: await freshDatabase('sqlite') }))
  const results = await runRounds([on, off, followed], [PACED], ROUNDS, SECONDS)
  const woken = await waiters()
  const of = (target: Target) => results.of(PACED.name, target.name)
  lines.push('', '### Catch-up', '', `A backlog of ${fmt(EVENTS)} events read in pages of 1000: **${fmt(rate)} events/s**.`,
    '', `### Creates: POST /plants, SQLite, ${fmt(RATE)} a second`, '', ...table(
      ['feed', 'req/s', 'server CPU µs/req', '× feed on, req/CPU-s'],
      [on, off, followed].map((target) => [target.name, medianRate(of(target)), medianCpu(of(target)), fmt(cpuRatio(of(target), of(on)), 3)]), 1),
    '', `### ${fmt(WAITERS)} long polls at the head`, '',
    `- server memory per waiting request: ${fmt(woken.bytes / 1024, 1)} KiB (RSS before and after they came in)`,
    `- after the create's answer, the first answered in ${fmt(median(woken.first), 1)} ms and the last in ${fmt(median(woken.last), 1)} ms (medians of ${ROUNDS} rounds; rounds: ${woken.last.map((ms) => fmt(ms, 0)).join(', ')} ms)`)
  finishRun(join(root, 'bench', 'results.md'), '## `npm run bench:feed`', lines)
} finally {
  await removeDatabases()
}
