import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import t from 'tap'
import { bounded, pollUntil } from '../helpers/bounded.js'
import { codeBlocks, readPage } from '../helpers/markdown.js'
import { EXIT_MS, exited, failedStart, LOADER_ENV, serverCommand, START_MS, startServer } from '../helpers/server.js'

t.test('a fresh start: prints a token, creates and reads a plant over HTTP, stops on SIGTERM', async (t) => {
  const dir = t.testdir()
  const server = await startServer(t, { DATABASE_URL: `sqlite:${join(dir, 'data', 'plants.db')}` })
  const token = /plant-store:\s+(\S+)\s*$/.exec(server.stderr())?.[1] as string
  t.match(server.stderr(), /WARNING: no API_TOKENS or API_TOKENS_FILE set/)
  t.match(token, /^[A-Za-z0-9_-]{32}$/)
  const shown = codeBlocks(readPage('README.md')).find((block) => block.lang === 'text' && block.headings.at(-1) === 'Quick start')
  t.ok(server.stderr().includes((shown?.code ?? '-').replace(/\S+\n$/, `${token}\n`)), "what the README's quick start shows, with this run's token")

  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const created = await fetch(`${server.url}/plants`, { method: 'POST', headers: auth, body: '{"id":9223372036854775807,"name":"Palm","tag":"tree"}' })
  t.equal(created.status, 200)
  t.same(await created.json(), { name: 'Palm', tag: 'tree' })
  const read = await fetch(`${server.url}/plants/9223372036854775807`, { headers: auth })
  t.same(await read.json(), { name: 'Palm', tag: 'tree' })
  const anonymous = await fetch(`${server.url}/plants/1`)
  t.equal(anonymous.status, 401)
  t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="plant-store"')
  t.notMatch(server.stdout(), token, 'the token never reaches the log')

  server.child.kill('SIGTERM')
  t.same(await exited(server), { code: 0, signal: null })
})

t.test('a bad variable stops the start with one line and exit code 1', async (t) => {
  const { code, stderr } = await failedStart({ API_TOKENS: 'a', PORT: 'eighty' })
  t.equal(code, 1)
  t.equal(stderr, 'plant-store: PORT="eighty" is not valid: expected a TCP port, an integer from 0 to 65535\n')
})

t.test('production without tokens does not start', async (t) => {
  const { code, stderr } = await failedStart({ NODE_ENV: 'production' })
  t.equal(code, 1)
  t.match(stderr, /^plant-store: API_TOKENS or API_TOKENS_FILE must name at least one token when NODE_ENV="production": [^\n]+\n$/)
})

t.test('a store that cannot open stops the start with exit code 1', async (t) => {
  const file = join(t.testdir({ 'not-a-dir': 'x' }), 'not-a-dir')
  const { code, stderr } = await failedStart({ API_TOKENS: 'a'.repeat(32), DATABASE_URL: `sqlite:${file}/plants.db` })
  t.equal(code, 1)
  t.match(stderr, /^plant-store: cannot start: /)
})

t.test('a token shorter than 32 characters is warned of at start, by its position, never printed', async (t) => {
  const dir = t.testdir({ tokens: `${'f'.repeat(40)}\n\nshort-file-secret\n`, 'not-a-dir': 'x' })
  // Warned before the store opens: one that cannot ends the start right after.
  const { stderr } = await failedStart({ API_TOKENS: `${'a'.repeat(32)},short-list-secret`, API_TOKENS_FILE: join(dir, 'tokens'), DATABASE_URL: `sqlite:${join(dir, 'not-a-dir')}/plants.db` })
  t.match(stderr, /^plant-store: WARNING: the token at API_TOKENS entry 2 has 17 characters: use at least 32 random ones \(openssl rand -hex 32\)\n/)
  t.match(stderr, /\nplant-store: WARNING: the token at API_TOKENS_FILE line 3 has 17 characters: /)
  t.notMatch(stderr, /short-(list|file)-secret/, 'the tokens are not printed')
})

t.test('a bad tokens file stops the start with one line naming its line, never the token', async (t) => {
  const dir = t.testdir({
    unknown: `# the dashboard\n${'d'.repeat(32)} plants:read\nsecret-writer-token-0123456789abcdef plants:wirte\n`,
    twice: 'secret-writer-token-0123456789abcdef plants:write\n\nsecret-writer-token-0123456789abcdef plants:read plants:write\n'
  })
  const unknown = await failedStart({ API_TOKENS_FILE: join(dir, 'unknown') })
  t.equal(unknown.code, 1)
  t.equal(unknown.stderr, 'plant-store: API_TOKENS_FILE line 3 is not valid: word 1 after the token is not a scope; ' +
    'expected plants:read, plants:write, webhooks, metrics or events:read, or the token alone for every scope\n')
  const twice = await failedStart({ API_TOKENS_FILE: join(dir, 'twice') })
  t.equal(twice.code, 1)
  t.equal(twice.stderr, 'plant-store: API_TOKENS_FILE line 3 is not valid: it gives a token that API_TOKENS_FILE line 1 gives with other scopes; ' +
    'give each token once, with all its scopes\n')
  const reused = await failedStart({ API_TOKENS: 'secret-writer-token-0123456789abcdef', API_TOKENS_FILE: join(dir, 'twice') })
  t.match(reused.stderr, /^plant-store: API_TOKENS_FILE line 1 is not valid: it gives a token that API_TOKENS entry 1 gives with other scopes; [^\n]+\n$/)
  t.notMatch(unknown.stderr + twice.stderr + reused.stderr, /secret|wirte|ddd/, 'neither the token nor the word')
})

t.test('at a terminal the log is pretty-printed; elsewhere it is JSON lines', async (t) => {
  // script(1) gives the server a pseudo-terminal as its standard output.
  const command = serverCommand().map((part) => `'${part}'`).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...LOADER_ENV, PORT: '0', API_TOKENS: 'a', DATABASE_URL: 'sqlite::memory:' },
    stdio: ['pipe', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  // Listened for from the start: it may end before it says it listens.
  const ended = once(child, 'close')
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const plain = (): string => out.replace(/\x1b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex
  await bounded(Promise.race([
    pollUntil(() => /INFO \((\d+)\): Server listening at (http:\S+)/.test(plain()), START_MS, 'the server listening'),
    ended.then(() => { throw new Error(`the server ended before it listened: ${plain()}`) })
  ]), START_MS, 'the server listening', plain)
  const [, pid, url] = /INFO \((\d+)\): Server listening at (http:\S+)/.exec(plain()) as RegExpExecArray

  t.equal((await fetch(`${url}/plants/1`, { headers: { authorization: 'Bearer a' } })).status, 404)
  process.kill(Number(pid), 'SIGTERM')
  await bounded(ended, EXIT_MS, 'the server ending on SIGTERM', plain)
  t.match(plain(), /INFO \(\d+\): request completed\r?\n\s+reqId: "[\w-]+"\r?\n\s+req: {/)
  t.match(plain(), /INFO \(\d+\): store closed/)
  t.notMatch(out, /{"level"/, 'no JSON line')
})
