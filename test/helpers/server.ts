import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))
/** What `npm start` runs: the build of src/server.ts (`npm test` builds it before the tests). */
export const COMPILED_SERVER = fileURLToPath(new URL('../../dist/src/server.js', import.meta.url))

// The TypeScript loader this test runs under, and coverage collected from the child too;
// the compiled server runs under Node alone, as in production.
function spawnServer (env: Record<string, string>, node: string[] = [], script = SERVER) {
  const compiled = script === COMPILED_SERVER
  return spawn(process.execPath, [...(compiled ? [] : process.execArgv), ...node, script], {
    env: { PATH: process.env.PATH, ...(compiled ? {} : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

export interface RunningServer {
  child: ChildProcess
  url: string
  stdout: () => string
  stderr: () => string
  exit: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

/**
 * Starts src/server.ts as its own process, with the TypeScript loader this
 * test runs under (and `node`, more options for Node), or `script` (the
 * compiled server), and resolves once it listens (or rejects if it exits first).
 */
export async function startServer (t: Test, env: Record<string, string>, node: string[] = [], script = SERVER): Promise<RunningServer> {
  const child = spawnServer({ LOG_LEVEL: 'info', ...env }, node, script)
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { err += chunk })
  const exit = once(child, 'exit').then(([code, signal]) => ({ code, signal }))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })

  const url = await new Promise<string>((resolve, reject) => {
    const look = (): void => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (match !== null) resolve(match[1])
    }
    child.stdout.on('data', look)
    exit.then(({ code }) => reject(new Error(`the server exited with ${code} before listening: ${err}`)), reject)
  })
  return { child, url, stdout: () => out, stderr: () => err, exit }
}

/** Runs the server expecting it not to start. */
export async function failedStart (env: Record<string, string>): Promise<{ code: number | null, stderr: string }> {
  const child = spawnServer(env)
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, stderr }
}
