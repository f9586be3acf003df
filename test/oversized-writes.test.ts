import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { pollUntil } from './helpers/bounded.js'
import { TOKEN } from './helpers/build.js'
import { exited, startServer } from './helpers/server.js'
import { forEachStore } from './helpers/stores.js'

// GET /health every 50 ms, one line per answer: how long it took, in ms.
const PROBER = `const url = process.argv[1]
for (;;) {
  const start = performance.now()
  await fetch(url).then((res) => res.text())
  process.stdout.write(Math.round(performance.now() - start) + '\\n')
  await new Promise((resolve) => setTimeout(resolve, 50))
}`

const CREATES = 300
const TAG_BYTES = 400 * 1024
// From a few client addresses, as many clients would send them: no address reaches its connection cap.
const FROM = ['127.0.0.2', '127.0.0.3', '127.0.0.4']

/** The process's resident memory, in bytes, as the kernel counts it. */
function rss (pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) * 1024
}

/** One POST on a connection of its own from `from`: its status, or the network error's code. */
async function post (url: URL, from: string, body: Buffer): Promise<number | string> {
  return await new Promise((resolve) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: '/plants',
      method: 'POST',
      localAddress: from,
      agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': body.length }
    })
    // The answer may come before the body is all sent: then the server closes, and writing fails.
    req.on('response', (res) => { resolve(res.statusCode as number); res.resume() })
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    req.end(body)
  })
}

forEachStore(t, (t, _build, databaseUrl) => {
  t.test(`${CREATES} concurrent creates with 400 kB tags: refused unread (413), /health answers at once, memory stays put`, async (t) => {
    const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: await databaseUrl(t) })
    const url = new URL(server.url)
    const pid = server.child.pid as number
    // Warm: the first requests compile what they use.
    for (let i = 0; i < 20; i++) await fetch(`${server.url}/health`)
    const before = rss(pid)

    const tag = 'x'.repeat(TAG_BYTES)
    const bodies = Array.from({ length: CREATES }, (_, i) => Buffer.from(JSON.stringify({ id: i, name: `Plant ${i}`, tag })))
    // The probes come from a process of their own: this one is busy sending the creates.
    const prober = spawn(process.execPath, ['--input-type=module', '-e', PROBER, `${server.url}/health`], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.teardown(() => { if (prober.exitCode === null) prober.kill('SIGKILL') })
    let probed = ''
    prober.stdout.on('data', (chunk) => { probed += chunk })
    await pollUntil(() => probed.split('\n').length > 5, 30_000, 'the prober answered')
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, rss(pid)) }, 20)

    const answers = await Promise.all(bodies.map((body, i) => post(url, FROM[i % FROM.length], body)))
    await sleep(1000)
    clearInterval(sampler)
    prober.kill('SIGTERM')
    await once(prober, 'close')
    const waits = probed.trim().split('\n').map(Number)

    const statuses = [...new Set(answers)]
    // A 503 is load shedding: the turn of the loop that took it up had run too long on a busy machine.
    const tooLarge = answers.filter((status) => status === 413).length
    t.ok(tooLarge > 0 && statuses.every((status) => status === 413 || status === 503), `every create refused unread: ${tooLarge} with 413, the rest with ${statuses.filter((status) => status !== 413).join(', ') || 'nothing else'}`)
    // Bounds: about twice the longest wait and four times the growth measured with these limits on a
    // busy 2-core machine; without them, /health waited for seconds and the memory grew by hundreds of MiB.
    const longest = Math.max(...waits)
    const median = [...waits].sort((a, b) => a - b)[Math.floor(waits.length / 2)]
    t.ok(longest < 2000, `/health answered within ${longest} ms at the longest, ${median} ms in the median (${waits.length} probes)`)
    const growth = peak - before
    t.ok(growth < 200 * 2 ** 20, `resident memory grew by ${Math.round(growth / 2 ** 20)} MiB`)

    const after = await fetch(`${server.url}/plants`, { headers: { authorization: `Bearer ${TOKEN}` } })
    t.same(await after.json(), [], 'nothing was stored')
    server.child.kill('SIGTERM')
    await exited(server)
  })
})
