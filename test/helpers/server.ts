import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { bounded } from './bounded.js'

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))
/** What `npm start` runs: the build of src/server.ts (`npm test` builds it before the tests). */
export const COMPILED_SERVER = fileURLToPath(new URL('../../dist/src/server.js', import.meta.url))
/**
 * The Node.js options the service starts with: those of package.json's `start` script,
 * which the image's CMD and the compose file repeat (test/start-flags.test.ts). Every
 * server a test starts runs with them, so that the tests run what ships.
 */
export const NODE_FLAGS: string[] = (() => {
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  const words = scripts.start.split(/\s+/)
  if (words[0] !== 'node' || words.at(-1) !== 'dist/src/server.js') throw new Error(`package.json's start is not "node [options] dist/src/server.js": ${scripts.start}`)
  return words.slice(1, -1)
})()

/** The command that starts src/server.ts as the service starts, under the TypeScript loader this test runs under. */
export function serverCommand (): string[] {
  return [process.execPath, ...process.execArgv, ...NODE_FLAGS, SERVER]
}

/**
 * How long a server process may take to start (listening, or failing), and to end once
 * told to: many times what it takes, so that only a process that hangs fails. A start
 * under the TypeScript loader, which compiles src/ first, took 10 s on a busy 2-core
 * machine, and 28 s for three at once; a stop takes well under a second, 10 s at most
 * (its grace period after SIGTERM).
 */
export const START_MS = 120_000
export const EXIT_MS = 60_000

/**
 * The environment of a server started under the TypeScript loader of the test that
 * starts it: its coverage is collected too. The loader strips the types and checks none
 * (test/helpers/strip-types.mjs): types are `npm run typecheck`'s to check.
 */
export const LOADER_ENV = { PATH: process.env.PATH, NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }

/**
 * The environment of the compiled server: Node alone, as in production, with no coverage
 * recorded. tap would map it through dist's source maps onto src/, where tsc's functions
 * do not start where the stripped sources' do, and count each of them twice, once uncovered.
 */
const COMPILED_ENV = { PATH: process.env.PATH, _TAPJS_PROCESSINFO_COVERAGE_: '0' }

// The TypeScript loader this test runs under, or the compiled server; the service's own Node options, then the test's.
function spawnServer (env: Record<string, string>, node: string[] = [], script = SERVER) {
  const compiled = script === COMPILED_SERVER
  return spawn(process.execPath, [...(compiled ? [] : process.execArgv), ...NODE_FLAGS, ...node, script], {
    env: { ...(compiled ? COMPILED_ENV : LOADER_ENV), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

export interface RunningServer {
  child: ChildProcess
  url: string
  stdout: () => string
  stderr: () => string
  /** Settles once the process has ended and its output has all been read. */
  exit: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

/**
 * Starts src/server.ts as its own process, with the TypeScript loader this
 * test runs under (with the service's Node options, then `node`, the test's own), or `script` (the
 * compiled server), and resolves once it listens (or rejects if it exits first,
 * or has not listened within START_MS).
 */
export async function startServer (t: Test, env: Record<string, string>, node: string[] = [], script = SERVER): Promise<RunningServer> {
  const child = spawnServer({ LOG_LEVEL: 'info', ...env }, node, script)
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { err += chunk })
  // Listened for from the start, so that an end before anyone awaits it is not missed; and
  // 'close' rather than 'exit', which can come before the last of stdout and stderr is read.
  const exit = once(child, 'close').then(([code, signal]) => ({ code, signal }))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })

  const listening = new Promise<string>((resolve, reject) => {
    const look = (): void => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (match !== null) resolve(match[1])
    }
    child.stdout.on('data', look)
    exit.then(({ code }) => reject(new Error(`the server exited with ${code} before listening: ${err}`)), reject)
  })
  // Past START_MS the test fails; its teardown kills the process.
  const url = await bounded(listening, START_MS, `the server (pid ${child.pid}) listening`, () => `stdout: ${out}\nstderr: ${err}`)
  return { child, url, stdout: () => out, stderr: () => err, exit }
}

/** The server's end (`server.exit`), awaited at most `ms`; past that the test fails, and its teardown kills the process. */
export async function exited (server: RunningServer, ms = EXIT_MS): Promise<{ code: number | null, signal: NodeJS.Signals | null }> {
  return await bounded(server.exit, ms, `the server (pid ${server.child.pid}) ending`, () => `stderr: ${server.stderr()}`)
}

/** Runs the server expecting it not to start: it must end by itself within START_MS. */
export async function failedStart (env: Record<string, string>): Promise<{ code: number | null, stderr: string }> {
  const child = spawnServer(env)
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  // 'close', not 'exit': the process has ended and its stderr has all been read.
  const ended = once(child, 'close')
  try {
    const [code] = await bounded(ended, START_MS, `the server (pid ${child.pid}) ending by itself`, () => `stderr: ${stderr}`)
    return { code, stderr }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}
