import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { bounded, pollUntil } from '../helpers/bounded.js'
import { EXIT_MS, LOADER_ENV, serverCommand, START_MS } from '../helpers/server.js'

const DESCRIPTORS = 200

/** The server process, as test/helpers/server.ts starts it, under a real descriptor limit of its own. */
async function startLimited (t: Test, env: Record<string, string>) {
  const command = `ulimit -n ${DESCRIPTORS} && exec ${serverCommand().map((part) => `'${part}'`).join(' ')}`
  const child = spawn('sh', ['-c', command], {
    env: { ...LOADER_ENV, PORT: '0', API_TOKENS: 'a', DATABASE_URL: 'sqlite::memory:', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const exit = once(child, 'exit')
  const listening = (async () => {
    while (!/Server listening at http:\/\/127\.0\.0\.1:\d+/.test(out)) {
      await Promise.race([once(child.stdout, 'data'), exit.then(() => { throw new Error(`exited before listening: ${out}`) })])
    }
  })()
  // Past START_MS the test fails; its teardown kills the process.
  await bounded(listening, START_MS, 'the server listening', () => `stdout: ${out}`)
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1])
  return { child, port, out: () => out, exit }
}

/** Opens `count` idle connections (no request, no token) and waits (30 s at most) until each is up or refused. */
async function idle (port: number, count: number): Promise<Socket[]> {
  const sockets = Array.from({ length: count }, () => connect(port, '127.0.0.1').on('error', () => {}))
  const settled = Promise.all(sockets.map((socket) => Promise.race([once(socket, 'connect'), once(socket, 'close')])))
  try {
    await bounded(settled, 30_000, `${count} connections up or refused`)
  } catch (error) {
    for (const socket of sockets) socket.destroy()
    throw error
  }
  return sockets
}

/** GET /health until it answers 200 or `ms` pass. */
async function healthy (port: number, ms: number): Promise<number | string> {
  let last: number | string = 'never tried'
  for (const end = Date.now() + ms; Date.now() < end;) {
    try {
      last = (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) })).status
      if (last === 200) return last
    } catch (error) {
      last = (error as Error).message
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return last
}

t.test('a full descriptor table: the process stays up, and serves again as connections close', async (t) => {
  // One address fills the table: no cap per address stops it first.
  const server = await startLimited(t, { MAX_CONNECTIONS_PER_ADDRESS: '1000' })
  const sockets = await idle(server.port, DESCRIPTORS - 10)
  // Well past a sampling period of the load shedder, whose timer threw EMFILE and ended the process.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  t.equal(server.child.exitCode, null, 'still running')
  for (const socket of sockets) socket.destroy()

  t.equal(await healthy(server.port, 10_000), 200, 'serves again')
  const created = await fetch(`http://127.0.0.1:${server.port}/plants`, {
    method: 'POST', headers: { authorization: 'Bearer a', 'content-type': 'application/json' }, body: '{"id":1,"name":"Fern"}'
  })
  t.equal(created.status, 200, 'and writes to the store')
  t.notMatch(server.out(), /EMFILE|uncaught|shutting down/, 'no error, no shutdown')
  server.child.kill('SIGTERM')
  t.same(await bounded(server.exit, EXIT_MS, 'the server ending'), [0, null])
})

t.test('MAX_CONNECTIONS: connections beyond it close the oldest that sent nothing at once, and that is logged, not one line each', async (t) => {
  const server = await startLimited(t, { MAX_CONNECTIONS: '50', MAX_CONNECTIONS_PER_ADDRESS: '1000' })
  const sockets = await idle(server.port, DESCRIPTORS - 10)
  const closedCount = () => sockets.filter((socket) => socket.destroyed || socket.readableEnded).length
  await pollUntil(() => closedCount() >= DESCRIPTORS - 10 - 50, 10_000, () => `${closedCount()} closed`)
  await new Promise((resolve) => setTimeout(resolve, 500))
  const closed = closedCount()
  t.equal(closed, DESCRIPTORS - 10 - 50, `${closed} of ${DESCRIPTORS - 10} closed: MAX_CONNECTIONS stay open`)
  t.equal(server.child.exitCode, null, 'still running')
  for (const socket of sockets) socket.destroy()
  t.equal(await healthy(server.port, 10_000), 200, 'serves again')
  const warnings = server.out().split('\n').filter((line) => line.includes('connections that had not sent a whole request closed: MAX_CONNECTIONS are open'))
  t.equal(warnings.length, 1, 'one line for the burst')
  t.match(JSON.parse(warnings[0]), { level: 40, maxConnections: 50 })
  server.child.kill('SIGTERM')
  t.same(await bounded(server.exit, EXIT_MS, 'the server ending'), [0, null])
})
