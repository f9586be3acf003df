import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { SUPPORTED_NODE_LINES, unsupportedNode } from '../../../src/config/node-support.js'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { failedStart } from '../../helpers/server.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')
// NODE_OPTIONS that make a process report Node.js 20.20.2, or REPORTED_NODE when set.
const NODE20 = `--import=${pathToFileURL(join(import.meta.dirname, '..', '..', 'helpers', 'reported-node.mjs')).href}`

t.test("what package.json's engines admits runs the service; older is refused with the lines that are supported", async (t) => {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  t.equal(engines.node, '^22.13.0 || ^24.0.0', 'the range this check follows')
  for (const version of ['22.13.0', '22.23.3', '24.0.0', '24.21.0', '26.1.0']) t.equal(unsupportedNode(version), undefined, version)
  for (const version of ['22.12.0', '22.0.0', '21.7.3', '20.20.2', '18.20.8']) {
    t.equal(unsupportedNode(version), `Node.js ${version} is not supported: use Node.js 22 (22.13 or later) or 24 (see the README, "Node.js").`)
  }
  t.equal(SUPPORTED_NODE_LINES, 'Node.js 22 (22.13 or later) or 24')
  t.equal(unsupportedNode(), undefined, 'the Node.js running this test is supported')
})

t.test('on Node.js 20 the SQLite store refuses to open, where better-sqlite3 would segfault', async (t) => {
  const real = process.versions
  Object.defineProperty(process, 'versions', { value: { ...real, node: '20.20.2' }, configurable: true })
  t.teardown(() => { Object.defineProperty(process, 'versions', { value: real, configurable: true }) })
  const path = join(t.testdir(), 'nested', 'plants.db')
  t.throws(() => openSqliteStore({ path }), /^the SQLite store cannot open: Node\.js 20\.20\.2 is not supported: use Node\.js 22 \(22\.13 or later\) or 24/)
  t.notOk(existsSync(join(t.testdir(), 'nested')), 'nothing was made on disk')
})

t.test('on Node.js 20 the server refuses to start with one line and exit 1', async (t) => {
  const { code, stderr } = await failedStart({ API_TOKENS: 'a'.repeat(32), DATABASE_URL: 'sqlite::memory:', NODE_OPTIONS: NODE20 })
  t.equal(code, 1)
  t.equal(stderr, 'plant-store: Node.js 20.20.2 is not supported: use Node.js 22 (22.13 or later) or 24 (see the README, "Node.js").\n')
})

t.test('on Node.js 20 the install is refused with one line (the preinstall script)', async (t) => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const run = async (nodeOptions: string): Promise<{ code: number, stderr: string }> => {
    try {
      const { stderr } = await promisify(execFile)('sh', ['-c', scripts.preinstall], { env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions } })
      return { code: 0, stderr }
    } catch (error) {
      return { code: (error as { code: number }).code, stderr: (error as { stderr: string }).stderr }
    }
  }
  t.same(await run(NODE20), { code: 1, stderr: 'plant-store: Node.js 20.20.2 is not supported: use Node.js 22 (22.13 or later) or 24 (see the README, "Node.js").\n' })
  t.same(await run(''), { code: 0, stderr: '' }, 'the Node.js running this test installs')
})

t.test('on Node.js 20 npm refuses the install before it fetches a package (engine-strict); the first release of each supported line installs', async (t) => {
  // The project's own install files, where no node_modules is: a dry run offline, so that nothing is fetched or written.
  const project = t.testdir(Object.fromEntries(['package.json', 'package-lock.json', '.npmrc'].map((file) => [file, readFileSync(join(ROOT, file), 'utf8')])))
  const install = async (version: string): Promise<{ code: number, stderr: string }> => {
    try {
      await promisify(execFile)('npm', ['install', '--dry-run', '--offline', '--no-audit', '--no-fund', '--logs-max=0'], {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: NODE20, REPORTED_NODE: version }
      })
      return { code: 0, stderr: '' }
    } catch (error) {
      return { code: (error as { code: number }).code, stderr: (error as { stderr: string }).stderr }
    }
  }
  const [refused, ...supported] = await Promise.all(['20.20.2', '22.13.0', '24.0.0'].map(install))
  t.equal(refused.code, 1, 'refused')
  t.match(refused.stderr, 'npm error notsup Not compatible with your version of node/npm: plant-store@')
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  t.match(refused.stderr, `npm error notsup Required: ${JSON.stringify(engines)}`)
  t.match(refused.stderr, 'npm error notsup Actual:   {"node":"v20.20.2"')
  // engine-strict holds every dependency to its own engines too: each must admit the whole supported range.
  t.same(supported, [{ code: 0, stderr: '' }, { code: 0, stderr: '' }], 'Node.js 22.13.0 and 24.0.0 install every dependency')
})
