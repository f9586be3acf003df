import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { bounded } from './helpers/bounded.js'
import { codeBlocks, pages, readPage, type CodeBlock } from './helpers/markdown.js'
import { hasCurl, steps, walk } from './helpers/walkthrough.js'
import { hooksByRoute } from './helpers/routes.js'

// The package seen from outside: packed, installed into a host app of its own,
// compiled against the published types and run as a real process.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const FIXTURES = join(ROOT, 'test', 'package')
const run = promisify(execFile)
const EXEC = { maxBuffer: 16 * 1024 * 1024 }
// Children run the packed JavaScript, without tap's loader or coverage.
const { NODE_OPTIONS: _options, NODE_V8_COVERAGE: _coverage, ...ENV } = process.env
const TOKEN = 'host-token'
const HOST_KEY = 'host-key'
const READ_TOKEN = 'host-read-token'

interface Packed { filename: string, files: Array<{ path: string }> }

/**
 * The examples of the README and the docs/ pages, as files of the host app: every
 * TypeScript one is compiled with the host, every JavaScript one run as CommonJS. One
 * that another imports is named as the page names it (`<!-- file: map-store.ts -->`).
 */
function docExamples (): Array<{ page: string, file: string, code: string }> {
  return pages().flatMap((page) => {
    const name = page === 'README.md' ? 'readme' : page.replace(/^docs\/(.+)\.md$/, 'docs-$1')
    const blocks = codeBlocks(readPage(page))
    const file = (block: CodeBlock, i: number) => /^file: (\S+\.ts)$/.exec(block.note ?? '')?.[1] ?? `${name}-${i + 1}.ts`
    return [
      ...blocks.filter((block) => block.lang === 'ts').map((block, i) => ({ page, file: file(block, i), code: block.code })),
      ...blocks.filter((block) => block.lang === 'js').map((block, i) => ({ page, file: `${name}-${i + 1}.cjs`, code: block.code }))
    ]
  })
}

// The examples each page has: one that loses its examples fails here rather than go unchecked.
const EXAMPLES: Record<string, number> = { 'docs/plugin.md': 7, 'docs/client.md': 3, 'docs/webhooks.md': 2, 'docs/events.md': 1 }

interface Answer { status: number, type: string | null, headers: Headers, text: string, body: any }

async function call (base: string, method: string, path: string, options: { headers?: Record<string, string>, json?: string, text?: string } = {}): Promise<Answer> {
  const headers = { ...options.headers }
  if (options.json !== undefined) headers['content-type'] ??= 'application/json'
  if (options.text !== undefined) headers['content-type'] ??= 'text/plain'
  const response = await fetch(base + path, { method, headers, body: options.json ?? options.text })
  const text = await response.text()
  let body: unknown
  try { body = JSON.parse(text) } catch { body = undefined }
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, text, body }
}

function isError (t: Test, answer: Answer, status: number, message?: RegExp): void {
  t.equal(answer.status, status, `status ${status}`)
  t.equal(answer.type, 'application/json; charset=utf-8')
  t.same(Object.keys(answer.body ?? {}).sort(), ['error', 'message'], `exactly the Error body: ${answer.text}`)
  t.equal(answer.body?.error, status)
  if (message !== undefined) t.match(answer.body?.message, message)
}

function isHostError (t: Test, answer: Answer, status: number, reason: RegExp): void {
  t.equal(answer.status, status, `status ${status}`)
  t.same(Object.keys(answer.body ?? {}).sort(), ['ok', 'reason'], `the host's format: ${answer.text}`)
  t.equal(answer.body?.ok, false)
  t.match(answer.body?.reason, reason)
}

/**
 * A copy of what `npm pack` reads to build and pack the package: its prepack empties
 * dist/ and builds it again, which must not happen under the tests that run the
 * project's own build beside this one (tap runs two files at a time).
 */
async function stage (work: string): Promise<string> {
  const source = join(work, 'source')
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'src', 'plugins', 'schemas', 'docs']) {
    await cp(join(ROOT, entry), join(source, entry), { recursive: true })
  }
  await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'junction')
  return source
}

const built = (path: string): boolean => path.startsWith('dist/')

t.test('the packed package, installed into a host app', async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'plant-store-package-'))
  t.teardown(() => rm(work, { recursive: true, force: true }))

  // prepack cleans dist/ and builds it: what is packed is what the sources make now.
  const source = await stage(work)
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { ...EXEC, cwd: source, env: ENV })
  const [packed] = JSON.parse(stdout) as Packed[]
  const files = packed.files.map((file) => file.path)
  const tarball = join(work, packed.filename)

  t.test('npm pack ships the build, its sources and nothing local', async (t) => {
    // The project's own tree, with its tests, secrets and local data: `files` keeps them out.
    const dry = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { ...EXEC, cwd: ROOT, env: ENV })
    const listed = (JSON.parse(dry.stdout) as Packed[])[0].files.map((file) => file.path)
    t.same(listed.filter((path) => !built(path)).sort(), files.filter((path) => !built(path)).sort(), 'a dry run in the project lists the sources the tarball holds')
    for (const path of [...listed, ...files]) {
      t.notMatch(path, /^(test|secrets|data|bench|\.ci|deploy|coverage|\.tap|node_modules)\//, `${path} is not a test, a secret, local data or tooling`)
      t.notMatch(path, /\.(db|db-wal|db-shm|sqlite|tgz|env)$|^Dockerfile$|compose|\.test\.ts$/, `${path} is not local data or a container file`)
    }

    // The README's links to its pages resolve where the package is installed; the screenshot stays behind.
    for (const page of pages()) t.ok(files.includes(page), `${page} is in the package`)
    t.notOk(files.some((path) => path.startsWith('docs/') && !path.endsWith('.md')), 'docs/ ships its pages only')

    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
    t.equal(manifest.private, undefined, 'the package can be packed and published')
    for (const [entry, target] of Object.entries<string | Record<string, string>>(manifest.exports)) {
      const targets = typeof target === 'string' ? [target] : Object.values(target)
      for (const path of targets) t.ok(files.includes(posix.normalize(path)), `${entry}: ${path} is in the package`)
    }

    // Every map the package ships points at a source it ships.
    const maps = files.filter((path) => path.endsWith('.map'))
    t.ok(maps.length > 0, 'source and declaration maps are shipped')
    for (const map of maps) {
      const { sources } = JSON.parse(await readFile(join(source, map), 'utf8')) as { sources: string[] }
      for (const mapped of sources) t.ok(files.includes(posix.join(posix.dirname(map), mapped)), `${map} → ${mapped} is shipped`)
    }
  })

  t.test('attw: the types resolve as the JavaScript does, for ESM consumers', async (t) => {
    // esm-only: the package has no CommonJS build, so node10 and node16-from-CJS resolutions are out of scope.
    const attw = join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js')
    const result = await run(process.execPath, [attw, tarball, '--profile', 'esm-only', '--format', 'table-flipped'], { ...EXEC, cwd: work, env: ENV })
      .catch((error: { stdout: string, stderr: string, code: number }) => error)
    t.equal('code' in result ? result.code : 0, 0, `attw passes:\n${result.stdout}${result.stderr}`)
  })

  // Installed as npm would: the tarball's package/ folder is node_modules/plant-store, and
  // its dependencies and the host's own sit next to it, one flat tree of links to this
  // project's installed copies (better-sqlite3 already built). The host lives in the
  // system's temporary directory, so nothing resolves through this project's node_modules.
  const host = join(work, 'host')
  const installed = join(host, 'node_modules', 'plant-store')
  await mkdir(installed, { recursive: true })
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  const published = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'))
  const hostDependencies = ['fastify', 'typescript', '@types/node']
  for (const name of new Set([...Object.keys(published.dependencies), ...hostDependencies])) {
    const link = join(host, 'node_modules', name)
    await mkdir(dirname(link), { recursive: true })
    await symlink(join(ROOT, 'node_modules', name), link, 'junction')
  }
  await writeFile(join(host, 'package.json'), JSON.stringify({
    name: 'plant-store-host',
    private: true,
    type: 'module',
    dependencies: { 'plant-store': `file:../${packed.filename}`, fastify: '^5.0.0', typescript: '~5.9', '@types/node': '^20.19.0' }
  }, null, 2))
  await writeFile(join(host, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      // The published declarations are checked too, not taken on trust.
      skipLibCheck: false,
      types: ['node'],
      outDir: 'build'
    },
    include: ['*.ts']
  }, null, 2))
  for (const file of ['host.ts', 'types.ts', 'client.ts', 'require.cjs']) await copyFile(join(FIXTURES, file), join(host, file))
  const examples = docExamples()
  for (const example of examples) await writeFile(join(host, example.file), example.code)

  const tsc = join(host, 'node_modules', 'typescript', 'bin', 'tsc')
  t.test('the host and the examples of the README and docs/ compile against the published types', async (t) => {
    for (const [page, least] of Object.entries(EXAMPLES)) {
      const count = examples.filter((example) => example.page === page).length
      t.ok(count >= least, `${page} has its ${least} examples (${count})`)
    }
    const check = await run(process.execPath, [tsc, '-p', host, '--noEmit'], { ...EXEC, cwd: host, env: ENV })
      .catch((error: { stdout: string, code: number }) => error)
    t.equal('code' in check ? check.code : 0, 0, `tsc --noEmit:\n${check.stdout}`)
  })
  // Meanwhile, emit without checking: the subtest above is the check.
  await run(process.execPath, [tsc, '-p', host, '--noCheck'], { ...EXEC, cwd: host, env: ENV })

  t.test('a CommonJS app requires the package, as the docs show', async (t) => {
    const { stdout } = await run(process.execPath, ['require.cjs'], { ...EXEC, cwd: host, env: ENV })
    t.equal(stdout, 'commonjs ok\n')
    const scripts = examples.filter((example) => example.file.endsWith('.cjs'))
    t.ok(scripts.length >= 1, 'the docs have their CommonJS example')
    for (const { file } of scripts) {
      const ran = await run(process.execPath, [file], { ...EXEC, cwd: host, env: ENV }).catch((error: { stderr: string, code: number }) => error)
      t.equal('code' in ran ? ran.code : 0, 0, `${file} runs: ${ran.stderr}`)
    }
  })

  t.test("docs/plugin.md's own store, registered as the page shows, answers the page's requests", async (t) => {
    if (!await hasCurl()) {
      if (process.env.CI === 'true') throw new Error('no curl, and CI=true runs the page\'s requests: apt-get install -y curl')
      t.pass('needs curl', { skip: 'no curl on PATH (under CI=true this fails instead)' })
      return
    }
    t.ok(examples.some((example) => example.file === 'map-store.ts') && examples.some((example) => example.file === 'garden.ts'), 'the page has its store and its app')
    const requests = codeBlocks(readPage('docs/plugin.md')).find((block) => block.lang === 'sh' && block.headings.at(-1) === 'Your own store')
    const { steps: walkthrough } = steps(requests?.code ?? '')
    t.ok(walkthrough.length >= 10, `the page shows its ${walkthrough.length} requests`)
    const garden = spawn(process.execPath, [join('build', 'garden.js')], { cwd: host, env: { ...ENV, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
    t.teardown(() => { garden.kill('SIGKILL') })
    let log = ''
    const address = new Promise<string>((resolve, reject) => {
      garden.stdout.on('data', (chunk) => {
        log += chunk
        const match = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(log)
        if (match !== null) resolve(match[1])
      })
      garden.once('exit', (code) => reject(new Error(`the page's app exited with ${code}: ${log}`)))
    })
    await walk(t, walkthrough, await bounded(address, 60_000, 'the page\'s app listening', () => log))
  })

  const child = spawn(process.execPath, [join('build', 'host.js')], {
    cwd: host, env: { ...ENV, API_TOKEN: TOKEN, HOST_KEY, READ_TOKEN }, stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    try {
      await bounded(once(child, 'exit'), 30_000, 'the host app ending after SIGTERM')
    } catch (error) {
      child.kill('SIGKILL')
      throw error
    }
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { err += chunk })
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /listening (http:\/\/\S+)/.exec(out)
      if (match !== null) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`the host exited with ${code}: ${err}`)))
  })
  // Past that the test fails; its teardown stops the host.
  const base = await bounded(listening, 60_000, 'the host app listening', () => `stdout: ${out}\nstderr: ${err}`)
  const bearer = { authorization: `Bearer ${TOKEN}` }

  t.test('/v1 with our auth follows the contract', async (t) => {
    const unauthenticated = await call(base, 'POST', '/v1/plants', { json: '{not json' })
    isError(t, unauthenticated, 401, /Authorization: Bearer/)
    t.equal(unauthenticated.headers.get('www-authenticate'), 'Bearer realm="plant-store"', 'the body is not read before auth')
    const wrong = await call(base, 'GET', '/v1/plants/1', { headers: { authorization: 'bearer nope' } })
    isError(t, wrong, 401)
    t.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="plant-store", error="invalid_token"')

    const created = await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 1, "name": "Monstera", "tag": "climber", "colour": "green"}' })
    t.equal(created.status, 200)
    t.equal(created.type, 'application/json; charset=utf-8')
    t.same(created.body, { name: 'Monstera', tag: 'climber' }, 'a Plant: no id, no unknown property')
    t.same((await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 1, "name": "Monstera", "tag": "climber"}' })).body,
      { name: 'Monstera', tag: 'climber' }, 'a replay answers the same')
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 1, "name": "Fern"}' }), 409, /already has id 1/)
    const read = await call(base, 'GET', '/v1/plants/1', { headers: bearer })
    t.same([read.status, read.body], [200, { name: 'Monstera', tag: 'climber' }], 'the stored plant stays as it was')
    isError(t, await call(base, 'GET', '/v1/plants/42', { headers: bearer }), 404, /No plant has id 42/)
    const patched = await call(base, 'PATCH', '/v1/plants/1', { headers: { ...bearer, 'content-type': 'application/merge-patch+json', 'if-match': read.headers.get('etag') as string }, json: '{"tag": null}' })
    t.same([patched.status, patched.body], [200, { name: 'Monstera' }], 'a merge patch against the ETag read')
    isError(t, await call(base, 'PATCH', '/v1/plants/1', { headers: { ...bearer, 'if-match': read.headers.get('etag') as string }, json: '{"tag": "x"}' }), 412, /If-Match/)
    t.equal((await call(base, 'PATCH', '/v1/plants/1', { headers: bearer, json: '{"tag": "climber"}' })).status, 200, 'and back, as application/json')

    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": "2", "name": "Fern"}' }), 400, /^body\/id must be integer$/)
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 2, "name": "Fern", "tag": null}' }), 400, /^body\/tag must be string$/)
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 2}' }), 400, /name/)
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 9223372036854775808, "name": "x"}' }), 400, /^body\/id must be an integer from/)
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 2,' }), 400, /not valid JSON/)
    isError(t, await call(base, 'GET', '/v1/plants/abc', { headers: bearer }), 400, /^params\/id/)
    isError(t, await call(base, 'POST', '/v1/plants', { headers: bearer, text: 'Monstera' }), 415, /application\/json/)

    for (const [id, name] of [['9007199254740993', 'odd'], ['9007199254740992', 'even']]) {
      t.equal((await call(base, 'POST', '/v1/plants', { headers: bearer, json: `{"id": ${id}, "name": "${name}"}` })).status, 200)
    }
    t.same((await call(base, 'GET', '/v1/plants/9007199254740993', { headers: bearer })).body, { name: 'odd' }, 'int64 ids stay exact')
    t.same((await call(base, 'GET', '/v1/plants/9007199254740992', { headers: bearer })).body, { name: 'even' })

    const page = await fetch(`${base}/v1/plants?limit=2`, { headers: bearer })
    t.equal(await page.text(), '[{"id":1,"name":"Monstera","tag":"climber"},{"id":9007199254740992,"name":"even"}]', 'ids exact in a list')
    const link = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') as string) as RegExpExecArray
    t.match(link[1], /^\/v1\/plants\?limit=2&cursor=/, 'the next link carries the prefix')
    const rest = await fetch(new URL(link[1], `${base}/v1/plants?limit=2`), { headers: bearer })
    t.equal(await rest.text(), '[{"id":9007199254740993,"name":"odd"}]')
    t.equal(rest.headers.get('link'), null)
    isError(t, await call(base, 'GET', '/v1/plants?limit=0', { headers: bearer }), 400, /^querystring\/limit/)
    t.equal((await fetch(`${base}/v1/plants/9007199254740993`, { method: 'DELETE', headers: bearer })).status, 204)
    isError(t, await call(base, 'DELETE', '/v1/plants/9007199254740993', { headers: bearer }), 404, /No plant has id 9007199254740993/)
    t.equal((await call(base, 'POST', '/v1/plants', { headers: bearer, json: '{"id": 9007199254740993, "name": "again"}' })).status, 200, 'a deleted id is free')
  })

  t.test('/v3 with our auth and a token narrowed to plants:read: the scopes the routes declare hold', async (t) => {
    const reader = { authorization: `Bearer ${READ_TOKEN}` }
    t.same((await call(base, 'GET', '/v3/plants/1', { headers: reader })).body, { name: 'Monstera', tag: 'climber' }, 'the same store as /v1')
    t.equal((await call(base, 'GET', '/v3/plants', { headers: reader })).status, 200)
    for (const [method, path, json] of [['POST', '/v3/plants', '{"id": 3, "name": "Moss"}'], ['POST', '/v3/plants', '{not json'], ['DELETE', '/v3/plants/1', undefined]]) {
      const refused = await call(base, method as string, path as string, { headers: reader, json })
      isError(t, refused, 403, /needs the scope plants:write/)
      t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"', `${method} ${path}`)
    }
    isError(t, await call(base, 'GET', '/v3/plants/3', { headers: bearer }), 404, /No plant has id 3/)
    t.equal((await call(base, 'POST', '/v3/plants', { headers: bearer, json: '{"id": 3, "name": "Moss"}' })).status, 200, 'a token with every scope writes')
    t.equal((await call(base, 'DELETE', '/v3/plants/3', { headers: bearer })).status, 204)
  })

  t.test("/v2 with the host's own auth, /open with none and a store of its own", async (t) => {
    isHostError(t, await call(base, 'GET', '/v2/plants/1'), 401, /unknown key/)
    const key = { 'x-host-key': HOST_KEY }
    t.same((await call(base, 'GET', '/v2/plants/1', { headers: key })).body, { name: 'Monstera', tag: 'climber' }, 'the same store as /v1')
    isError(t, await call(base, 'POST', '/v2/plants', { headers: key, json: '{"id": 1.5, "name": "x"}' }), 400, /^body\/id must be integer$/)

    isError(t, await call(base, 'GET', '/open/plants/1'), 404, /No plant has id 1/)
    t.same((await call(base, 'POST', '/open/plants', { json: '{"id": 1, "name": "Fern"}' })).body, { name: 'Fern' })
    t.same((await call(base, 'GET', '/open/plants/1')).body, { name: 'Fern' })
    t.same((await call(base, 'GET', '/v1/plants/1', { headers: bearer })).body, { name: 'Monstera', tag: 'climber' })
  })

  t.test("the host's routes, errors and 404s keep the host's format", async (t) => {
    t.same((await call(base, 'GET', '/hello')).body, { ok: true }, 'no auth hook outside /v1')
    isHostError(t, await call(base, 'GET', '/boom'), 418, /^host failure$/)
    isHostError(t, await call(base, 'GET', '/nowhere'), 404, /nothing at \/nowhere/)
    isHostError(t, await call(base, 'GET', '/v1/nowhere', { headers: bearer }), 404, /nothing at \/v1\/nowhere/)
    isHostError(t, await call(base, 'PUT', '/v1/plants/1', { headers: bearer }), 404, /nothing at/)
    t.same((await call(base, 'POST', '/echo', { text: 'hi' })).body, { ok: true, body: 'hi' }, "the host keeps Fastify's text/plain parser")
    t.equal((await call(base, 'POST', '/echo', { json: '{"n": 9007199254740993}' })).text, '{"ok":true,"body":{"n":9007199254740992}}',
      "the host keeps Fastify's JSON parser (which rounds)")
    isHostError(t, await call(base, 'POST', '/echo', { json: '{"n":' }), 400, /JSON/)
  })

  t.test('plant-store/client, installed, calls the host\'s /v1', async (t) => {
    const { stdout } = await run(process.execPath, [join('build', 'client.js'), `${base}/v1`, TOKEN], { ...EXEC, cwd: host, env: ENV })
    t.equal(stdout, [
      '{"name":"Max","tag":"client"}',
      'bigint -9223372036854775808 Min',
      'bigint 9223372036854775807 Max',
      'not-found 404 No plant has id -9223372036854775808.',
      'conflict 409 A different plant already has id 9223372036854775807; it was left as it was.'
    ].join('\n') + '\n')
  })

  t.test('nothing the plugins registered is visible outside their scope', async (t) => {
    const probe = (await call(base, 'GET', '/probe')).body
    t.same(probe.schemas, [], 'no shared schema at the root')
    t.equal(probe.errorHandler, 'bound hostError', "the root's error handler is the host's")
    t.equal(probe.textParser, true, "the root keeps Fastify's parsers")
    t.same(probe.decorators, [], 'no instance decorator at the root')
    t.same(probe.requestDecorators, [], 'no request decorator at the root')
    t.equal(probe.sqliteLoaded, true)
    t.equal(probe.pgLoaded, false, 'the SQLite side never loads pg')

    const hooks = hooksByRoute(probe.routes)
    const onRequest = (route: string) => (hooks.get(route) ?? []).filter((hook) => hook.startsWith('onRequest')).length
    for (const [route, list] of hooks) {
      // The list route's own check of repeated parameters is the route's, not a leak.
      const own = list.filter((hook) => hook !== 'onSend "headRouteOnSendHandler()"' && hook !== 'preValidation "refuseRepeated()"')
      if (/ \/(v1|v2|v3)\//.test(route)) t.equal(own.length, 1, `${route}: only the auth hook of its scope (${own})`)
      else t.same(own, [], `${route}: no hook`)
    }
    t.ok(hooks.has('GET /hello') && hooks.has('POST /open/plants') && hooks.has('DELETE /v1/plants/:id'), 'the routes were read')
    t.equal(onRequest('POST /v1/plants'), 1)
  })
})
