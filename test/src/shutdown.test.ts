import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { bounded, pollUntil } from '../helpers/bounded.js'
import { TOKEN } from '../helpers/build.js'
import { exited, startServer, type RunningServer } from '../helpers/server.js'

const HEADERS = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

/** How long an answer on a connection to the server may take: many times what it takes. */
const ANSWER_MS = 30_000

/**
 * A POST in flight: resolves once the server has its headers (it answered
 * 100 Continue) and half of its body; `finish` sends the rest.
 */
async function slowPost (url: string, body: string): Promise<{ finish: () => void, answer: Promise<string> }> {
  const { hostname, port } = new URL(url)
  const socket: Socket = connect(Number(port), hostname)
  await once(socket, 'connect')
  let data = ''
  socket.on('data', (chunk) => { data += chunk })
  const answer = once(socket, 'close').then(() => data)
  const half = Math.floor(body.length / 2)
  socket.write(`POST /plants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`)
  const continued = (async () => {
    while (!data.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) await once(socket, 'data')
  })()
  await bounded(continued, ANSWER_MS, '100 Continue', () => `received: ${JSON.stringify(data)}`)
  socket.write(body.slice(0, half))
  return { finish: () => { socket.write(body.slice(half)) }, answer }
}

async function waitFor (server: RunningServer, pattern: RegExp): Promise<void> {
  await pollUntil(() => pattern.test(server.stdout()), 30_000, `a log line ${pattern}`)
}

function logLines (server: RunningServer): Array<{ msg: string }> {
  return server.stdout().trim().split('\n').map((line) => JSON.parse(line))
}

t.test('SIGTERM: in-flight requests finish, every 200 is committed, the store closes, exit 0', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(t.testdir(), 'plants.db')}` }
  const server = await startServer(t, env)

  const slow = await slowPost(server.url, JSON.stringify({ id: 1, name: 'Slow fern', tag: 'in flight' }))
  const burst = Array.from({ length: 300 }, (_, i) => {
    const plant = { id: 1000 + i, name: `Plant ${i}` }
    return fetch(`${server.url}/plants`, { method: 'POST', headers: HEADERS, body: JSON.stringify(plant) })
      .then(async (res) => ({ plant, status: res.status, body: await res.json() }), () => ({ plant, status: 0, body: undefined }))
  })
  // The signal arrives while the burst is being answered and the slow body is still arriving.
  await Promise.race(burst)
  server.child.kill('SIGTERM')
  await waitFor(server, /"msg":"shutting down"/)
  await sleep(200)
  t.equal(server.child.exitCode, null, 'still running: waiting for the in-flight request')
  slow.finish()

  t.match(await bounded(slow.answer, ANSWER_MS, 'the in-flight request\'s answer'), /^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 200 OK\r\n[^]*\r\n\r\n{"name":"Slow fern","tag":"in flight"}$/, 'the in-flight request is answered')
  const results = await Promise.all(burst)
  t.same(await exited(server), { code: 0, signal: null })

  const ok = results.filter((r) => r.status === 200)
  t.ok(ok.length > 0, `${ok.length} of the burst answered 200`)
  for (const r of ok) t.same(r.body, { name: r.plant.name })
  t.same(results.filter((r) => ![0, 200, 503].includes(r.status)), [], 'the others refused (503) or not connected, never a failure')
  const messages = logLines(server).map((line) => line.msg)
  t.ok(messages.indexOf('store closed') > messages.indexOf('shutting down'), 'the store closes after the requests end')

  // Everything acknowledged is in the file.
  const again = await startServer(t, env)
  const read = async (id: number) => (await fetch(`${again.url}/plants/${id}`, { headers: HEADERS })).json()
  t.same(await read(1), { name: 'Slow fern', tag: 'in flight' })
  for (const r of ok) t.same(await read(r.plant.id), { name: r.plant.name }, `plant ${r.plant.id}`)
  again.child.kill('SIGTERM')
  t.same(await exited(again), { code: 0, signal: null })
})

t.test('a second signal exits at once, without waiting for the in-flight request', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(t.testdir(), 'plants.db')}` })
  const slow = await slowPost(server.url, JSON.stringify({ id: 1, name: 'Never finished' }))
  server.child.kill('SIGTERM')
  await waitFor(server, /"msg":"shutting down"/)
  const start = Date.now()
  server.child.kill('SIGTERM')
  t.same(await exited(server), { code: 1, signal: null })
  t.ok(Date.now() - start < 3000, 'at once, not after the 10 s grace delay')
  t.match(server.stdout(), /"msg":"second SIGTERM, exiting"/)
  await bounded(slow.answer, ANSWER_MS, 'the end of the in-flight request\'s connection')
})
