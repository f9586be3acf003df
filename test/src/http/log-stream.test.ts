import { spawn } from 'node:child_process'
import { once } from 'node:events'
import t from 'tap'
import { LOADER_ENV } from '../../helpers/server.js'

const MODULE = new URL('../../../src/http/log-stream.ts', import.meta.url).href

// A process of its own, under this test's TypeScript loader, writing to its standard output.
async function run (script: string): Promise<{ stdout: string, code: number | null }> {
  const child = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', `import { turnWriter } from ${JSON.stringify(MODULE)}\n${script}`], {
    env: LOADER_ENV, stdio: ['ignore', 'pipe', 'inherit']
  })
  let stdout = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  const [code] = await once(child, 'close') as [number | null]
  return { stdout, code }
}

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `{"n":${from + i}}\n`).join('')

t.test('the lines of each turn are written after it, in order', async (t) => {
  const { stdout, code } = await run(`
    const log = turnWriter(1)
    for (let n = 1; n <= 3; n++) log.write('{"n":' + n + '}\\n')
    setTimeout(() => { for (let n = 4; n <= 6; n++) log.write('{"n":' + n + '}\\n') }, 20)`)
  t.equal(code, 0)
  t.equal(stdout, lines(1, 6))
})

t.test('lines still held when the process exits in their turn are written before it ends', async (t) => {
  const { stdout, code } = await run(`
    const log = turnWriter(1)
    log.write('{"n":1}\\n')
    setTimeout(() => {
      log.write('{"n":2}\\n')
      log.write('{"n":3}\\n')
      process.exit(3)
    }, 50)`)
  t.equal(code, 3)
  // Line 1 may still be in the destination's asynchronous write when the process exits, and
  // land after 2 and 3 (sonic-boom's own flushSync cannot order itself after a write in flight):
  // what is promised is that nothing is lost.
  t.same(stdout.split('\n').filter((line) => line !== '').sort(), lines(1, 3).split('\n').filter((line) => line !== ''),
    'without the exit handler, 2 and 3 would be lost')
})
