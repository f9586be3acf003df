import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import t from 'tap'
import { Agent, request } from 'undici'
import { pollUntil } from '../helpers/bounded.js'
import { TOKEN } from '../helpers/build.js'
import { startServer } from '../helpers/server.js'

// A collector that means harm, on loopback: how it answers each export is the test's to switch.
type Behaviour = 'well' | 'endless chunk-size line' | 'trickle' | 'silence' | 'huge body' | 'endless 1xx'

// A connection's answer, written as fast as the service reads it (waiting whenever the socket is full).
function flood (socket: Socket, head: string, piece: Buffer): void {
  socket.write(head)
  const more = (): void => {
    let room = true
    while (room && !socket.destroyed) room = socket.write(piece)
  }
  socket.on('drain', more)
  more()
}

function hostileCollector () {
  let behaviour: Behaviour = 'well'
  let taken = 0
  // The connections met with a hostile answer since the last switch: when each was answered, and closed.
  let hostile: Array<{ since: number, until?: number }> = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let answered = false
    // An answer as soon as an export starts to arrive: the rest of it is read and ignored.
    socket.on('data', () => {
      if (answered) return
      answered = true
      if (behaviour !== 'well') {
        const connection: { since: number, until?: number } = { since: performance.now() }
        hostile.push(connection)
        socket.on('close', () => { connection.until = performance.now() })
      }
      if (behaviour === 'well') {
        taken++
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
        socket.end()
      } else if (behaviour === 'endless chunk-size line') {
        // A chunk size whose line never ends: an extension without end, and no CRLF.
        flood(socket, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=', Buffer.alloc(16 * 1024, 'a'))
      } else if (behaviour === 'endless 1xx') {
        // Informational answers without end, each a whole message to parse, and never the final one.
        flood(socket, '', Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'.repeat(512)))
      } else if (behaviour === 'huge body') {
        flood(socket, 'HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100000000000\r\n\r\n', Buffer.alloc(16 * 1024))
      } else if (behaviour === 'trickle') {
        // An answer that never ends, a byte at a time: never quiet long enough for an idle timeout.
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
        const drip = setInterval(() => socket.write('1\r\na\r\n'), 50)
        socket.on('close', () => clearInterval(drip))
      }
      // 'silence': the export is read, and never answered.
    })
  })
  return {
    server,
    /** Exports answered well so far. */
    taken: () => taken,
    /** How long each connection answered with hostility has been open, or stayed open, in ms. */
    held: () => hostile.map(({ since, until }) => ({ ms: (until ?? performance.now()) - since, closed: until !== undefined })),
    set (next: Behaviour) {
      behaviour = next
      hostile = []
      // The next export meets the new behaviour on a new connection.
      for (const socket of sockets) socket.destroy()
    },
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(resolve))
    }
  }
}

function rssMb (pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
}

// The CPU time the process has used so far, in ms (user and system; the kernel counts in ticks of 10 ms).
function cpuMs (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

t.test('a hostile collector costs only spans: creates keep their rate, RSS stays bounded, /health answers at once', async (t) => {
  const collector = hostileCollector()
  collector.server.listen(0, '127.0.0.1')
  await once(collector.server, 'listening')
  t.teardown(() => collector.close())
  const port = (collector.server.address() as { port: number }).port
  const service = await startServer(t, {
    API_TOKENS: TOKEN,
    DATABASE_URL: 'sqlite::memory:',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_TRACES_SAMPLER: 'always_on'
  })
  const pid = service.child.pid as number
  const agent = new Agent({ connections: 20 })
  t.teardown(() => agent.close())

  let nextId = 1
  // Creates from 16 clients at once for `ms`, /health asked every 50 ms beside them, RSS read as often.
  async function phase (ms: number) {
    const until = performance.now() + ms
    const cpuBefore = cpuMs(pid)
    let creates = 0
    const statuses = new Set<number>()
    const health: number[] = []
    let rss = 0
    const client = async () => {
      while (performance.now() < until) {
        const body = JSON.stringify({ id: nextId++, name: 'Fern' })
        const res = await request(`${service.url}/plants`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body })
        await res.body.dump()
        statuses.add(res.statusCode)
        if (res.statusCode === 200) creates++
      }
    }
    const probe = async () => {
      while (performance.now() < until) {
        const started = performance.now()
        const res = await request(`${service.url}/health`, { dispatcher: agent })
        await res.body.dump()
        health.push(performance.now() - started)
        rss = Math.max(rss, rssMb(pid))
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    await Promise.all([...Array.from({ length: 16 }, client), probe()])
    return { perSecond: creates / (ms / 1000), cpuPerCreate: (cpuMs(pid) - cpuBefore) * 1000 / creates, statuses: [...statuses], health: { median: median(health), max: Math.max(...health) }, rss }
  }

  // Each behaviour against a well-behaved collector just before it: what the service does with a
  // good one, in this run, on this machine (shared, and busy: only a large difference counts).
  await phase(2000)
  let first: number | undefined
  for (const behaviour of ['endless chunk-size line', 'trickle', 'silence', 'huge body', 'endless 1xx'] as const) {
    collector.set('well')
    const taken = collector.taken()
    const well = await phase(3000)
    // Within the exporter's delay (5 s) the spans of those creates are sent, and taken.
    await pollUntil(() => collector.taken() > taken, 15_000, 'a collector that behaves (again) taking spans')
    first ??= well.rss
    collector.set(behaviour)
    // Longer than an export's timeout (5 s): a connection the transport would hold past it is seen.
    const hostile = await phase(6000)
    for (const [name, seen] of [['well-behaved', well], [behaviour, hostile]] as const) {
      t.comment(`${name}: ${Math.round(seen.perSecond)} creates/s, ${Math.round(seen.cpuPerCreate)} µs of CPU each, /health median ${seen.health.median.toFixed(1)} ms, max ${seen.health.max.toFixed(1)} ms, RSS ${Math.round(seen.rss)} MB`)
    }
    t.same(hostile.statuses, [200], `${behaviour}: every create answered 200`)
    // Bounds loose enough for a machine that other work keeps busy (two windows a few seconds
    // apart can differ threefold): a collector that starves the service costs several times more.
    t.ok(hostile.perSecond >= well.perSecond / 4, `${behaviour}: creates keep their rate`)
    t.ok(hostile.cpuPerCreate <= well.cpuPerCreate * 2.5, `${behaviour}: and their cost`)
    t.ok(hostile.rss <= (first as number) + 100, `${behaviour}: RSS stays bounded`)
    t.ok(hostile.health.median <= Math.max(100, 3 * well.health.median), `${behaviour}: /health answers at once`)
    t.ok(hostile.health.max <= Math.max(2000, 5 * well.health.max), `${behaviour}: and never waits long`)
    if (behaviour === 'endless 1xx') {
      // Bounded like any other answer: cut at once, where the export's timeout would hold it 5 s.
      await pollUntil(() => collector.held().some(({ ms, closed }) => closed || ms >= 2500), 15_000, 'an export to the hostile collector')
      const held = collector.held().map(({ ms }) => Math.round(ms))
      t.ok(Math.max(...held) < 2500, `${behaviour}: an export is cut after a few informational answers (open ${held.join(', ')} ms)`)
    }
  }
})
