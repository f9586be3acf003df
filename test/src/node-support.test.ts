import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { SUPPORTED_NODE_LINES, unsupportedNode } from '../../src/node-support.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { failedStart } from '../helpers/server.js'

const NODE20 = `--import=${pathToFileURL(join(import.meta.dirname, '..', 'helpers', 'node20.mjs')).href}`

t.test('Node.js 22 and later run the service; 20 and older are refused with the lines that are supported', async (t) => {
  for (const version of ['22.0.0', '22.23.3', '24.21.0', '26.1.0']) t.equal(unsupportedNode(version), undefined, version)
  for (const version of ['20.20.2', '18.20.8']) {
    t.equal(unsupportedNode(version), `Node.js ${version} is not supported: use Node.js 22 or 24 (see the README, "Node.js").`)
  }
  t.equal(SUPPORTED_NODE_LINES, 'Node.js 22 or 24')
  t.equal(unsupportedNode(), undefined, 'the Node.js running this test is supported')
})

t.test('on Node.js 20 the SQLite store refuses to open, where better-sqlite3 would segfault', async (t) => {
  const real = process.versions
  Object.defineProperty(process, 'versions', { value: { ...real, node: '20.20.2' }, configurable: true })
  t.teardown(() => { Object.defineProperty(process, 'versions', { value: real, configurable: true }) })
  const path = join(t.testdir(), 'nested', 'plants.db')
  t.throws(() => openSqliteStore({ path }), /^the SQLite store cannot open: Node\.js 20\.20\.2 is not supported: use Node\.js 22 or 24/)
  t.notOk(existsSync(join(t.testdir(), 'nested')), 'nothing was made on disk')
})

t.test('on Node.js 20 the server refuses to start with one line and exit 1', async (t) => {
  const { code, stderr } = await failedStart({ API_TOKENS: 'a'.repeat(32), DATABASE_URL: 'sqlite::memory:', NODE_OPTIONS: NODE20 })
  t.equal(code, 1)
  t.equal(stderr, 'plant-store: Node.js 20.20.2 is not supported: use Node.js 22 or 24 (see the README, "Node.js").\n')
})

t.test('on Node.js 20 the install is refused with one line (the preinstall script)', async (t) => {
  const { scripts } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'))
  const run = async (nodeOptions: string): Promise<{ code: number, stderr: string }> => {
    try {
      const { stderr } = await promisify(execFile)('sh', ['-c', scripts.preinstall], { env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions } })
      return { code: 0, stderr }
    } catch (error) {
      return { code: (error as { code: number }).code, stderr: (error as { stderr: string }).stderr }
    }
  }
  t.same(await run(NODE20), { code: 1, stderr: 'plant-store: Node.js 20.20.2 is not supported: use Node.js 22 or 24 (see the README, "Node.js").\n' })
  t.same(await run(''), { code: 0, stderr: '' }, 'the Node.js running this test installs')
})
