// Instructions per create, counted by valgrind's callgrind: the same figure whatever else the
// machine runs, where CPU time per request grows with the load beside it. Each checkout's
// server (its build, its start script's Node.js options, SQLite, every default) runs under
// callgrind with instrumentation off; after a warm-up it is turned on, the counters zeroed,
// `CREATES` creates sent (4 at a time), and the counters dumped.
//   npm run bench:instructions -- <checkout> [<checkout>...]   (CREATES, WARM_UP, CONCURRENCY to change the counts)
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serviceCommand, TOKEN } from './load.js'

const WARM_UP = Number(process.env.WARM_UP ?? 300)
const CREATES = Number(process.env.CREATES ?? 500)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4)
// Under valgrind a turn of the loop is slow: load shedding would refuse the creates (its hook still runs).
const ENV = { LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY: '60000', DATABASE_TIMEOUT: '600000', REQUEST_TIMEOUT: '3600000' }

let nextId = BigInt(Date.now()) * 1000n

function send (port: number, agent: Agent, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
    request({ host: '127.0.0.1', port, method, path, agent, headers }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode as number))
    }).on('error', reject).end(body)
  })
}

async function creates (port: number, agent: Agent, count: number): Promise<void> {
  let sent = 0
  const worker = async (): Promise<void> => {
    while (sent++ < count) {
      const status = await send(port, agent, 'POST', '/plants', `{"id":${nextId++},"name":"bench plant","tag":"bench"}`)
      if (status !== 200) throw new Error(`a create answered ${status}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

/** Instructions per create of the build in `checkout`. */
async function measure (checkout: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-instructions-'))
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const out = join(dir, 'callgrind.out')
  const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}`,
    process.execPath, ...serviceCommand(checkout)], {
    // All of this process's environment: callgrind_control finds the process by its user and host.
    env: { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, ...ENV },
    stdio: ['ignore', 'ignore', 'ignore']
  })
  const control = (...args: string[]): void => {
    // Found by user and host name: HOST is the server's variable too, so the same one here.
    const result = spawnSync('callgrind_control', [...args, String(child.pid)], { encoding: 'utf8', env: { ...process.env, HOST: '127.0.0.1' } })
    if (result.status !== 0) throw new Error(`callgrind_control ${args.join(' ')}: ${result.stderr}`)
  }
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${checkout}: the server exited with ${child.exitCode}`)
      if (await send(port, agent, 'GET', '/ready').then(() => true, () => false)) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    await creates(port, agent, WARM_UP)
    // Instrumenting starts afresh: a few creates before the count, so that it holds none of that.
    control('-i', 'on')
    await creates(port, agent, 20)
    control('-z')
    await creates(port, agent, CREATES)
    control('-d')
    const dumps = readdirSync(dir).filter((name) => name.startsWith('callgrind.out.'))
    let total = 0
    for (const name of dumps) total += Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, name), 'utf8'))?.[1] ?? 0)
    return total / CREATES
  } finally {
    agent.destroy()
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}

const checkouts = process.argv.slice(2)
if (checkouts.length === 0) throw new Error('usage: npm run bench:instructions -- <checkout> [<checkout>...]')
for (const checkout of checkouts) {
  const perCreate = await measure(checkout)
  console.log(`${checkout}\t${Math.round(perCreate)} instructions per create (${CREATES} creates after ${WARM_UP})`)
}
