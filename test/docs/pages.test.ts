import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, posix } from 'node:path'
import t from 'tap'
import { unsupportedNode } from '../../src/config/node-support.js'
import { anchors, codeBlocks, links, pages, readPage, ROOT, slug, tableRows } from '../helpers/markdown.js'

// The README and docs/ hold together: every link to a file of the repository and to a
// heading resolves, and every code block says what it is, so that the tests that compile
// or run the examples (test/package.test.ts, test/docs/readme.test.ts) find them all.

// Pages the README links that another branch of work writes: checked as soon as they exist.
const WRITTEN_ELSEWHERE = new Map([['docs/performance.md', 'written with the benchmark']])

// ts: compiled, js: run as CommonJS (test/package.test.ts); sh: shell; json and text: what a command prints.
const LANGS = new Set(['ts', 'js', 'sh', 'json', 'text'])

t.test('every link to a file or a heading resolves', async (t) => {
  for (const page of pages()) {
    const text = readPage(page)
    for (const target of links(text)) {
      if (/^[a-z]+:/.test(target)) continue
      const [path, anchor] = target.split('#')
      const file = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path))
      const where = `${page} → ${target}`
      const todo = WRITTEN_ELSEWHERE.get(file)
      t.notOk(file.startsWith('../'), `${where} stays in the repository`)
      if (!existsSync(join(ROOT, file))) {
        t.fail(`${where}: ${file} exists`, todo === undefined ? {} : { todo })
        continue
      }
      if (anchor === undefined) continue
      t.ok(file.endsWith('.md') && statSync(join(ROOT, file)).isFile(), `${where}: an anchor points into a page`)
      t.ok(anchors(readPage(file)).has(anchor), `${where}: ${file} has the heading`)
    }
  }
})

t.test('the README links every page of docs/, and each page the README', async (t) => {
  const readme = links(readPage('README.md')).map((target) => target.split('#')[0])
  for (const page of pages().filter((page) => page !== 'README.md')) {
    t.ok(readme.includes(page), `the README links ${page}`)
  }
  for (const page of WRITTEN_ELSEWHERE.keys()) t.ok(readme.includes(page), `the README links ${page}`)
  for (const page of ['docs/deploy.md', 'docs/plugin.md', 'docs/client.md', 'docs/webhooks.md', 'docs/observability.md', 'docs/events.md']) {
    t.ok(existsSync(join(ROOT, page)), `${page} is there`)
  }
})

t.test('the heading the refusal of an old Node.js points at is there', async (t) => {
  const message = unsupportedNode('20.20.2') as string
  const heading = /see the README, "([^"]+)"/.exec(message)?.[1] as string
  t.ok(anchors(readPage('README.md')).has(slug(heading)), `the README has a heading "${heading}"`)
})

t.test('every code block says what it is', async (t) => {
  for (const page of pages()) {
    for (const block of codeBlocks(readPage(page))) {
      t.ok(LANGS.has(block.lang), `${page} line ${block.line}: \`\`\`${block.lang} is one of ${[...LANGS].join(', ')}`)
    }
  }
})

// The blocks other than ts and js that a test runs or reads, by page and the heading above them, and the test.
const RUN = new Map([
  ['README.md › Quick start', 'test/src/server.test.ts'],
  ['README.md › curl', 'test/docs/readme.test.ts'],
  ['README.md › Tokens and scopes', 'test/docs/readme.test.ts'],
  ['docs/plugin.md › Your own store', 'test/package.test.ts'],
  ['docs/deploy.md › Secrets', 'test/docs/deploy.test.ts'],
  ['docs/observability.md › Metrics', 'test/docs/observability.test.ts'],
  ['docs/observability.md › Request ids and logs', 'test/docs/observability.test.ts'],
  ['docs/webhooks.md › What a receiver gets', 'test/docs/webhooks.test.ts']
])

t.test('every code block is compiled or run by a test, or says why it is not', async (t) => {
  const seen = new Set<string>()
  for (const page of pages()) {
    for (const block of codeBlocks(readPage(page))) {
      const where = `${page} › ${block.headings.at(-1)}`
      const notRun = /^not run: (.+)$/.exec(block.note ?? '')?.[1]
      if (notRun !== undefined) {
        t.ok(notRun.length >= 10, `${page} line ${block.line} is not run: ${notRun}`)
        continue
      }
      // Every ts block is compiled with the packed package, every js block run as CommonJS.
      if (block.lang === 'ts' || block.lang === 'js') continue
      seen.add(where)
      t.ok(RUN.has(where), `${page} line ${block.line} (\`\`\`${block.lang} under "${block.headings.at(-1)}") is run by a test, or marked <!-- not run: why -->`)
    }
  }
  for (const [where, test] of RUN) {
    t.ok(seen.has(where), `${where} has a block that ${test} runs`)
    const heading = where.split(' › ')[1]
    t.ok(readFileSync(join(ROOT, test), 'utf8').includes(`'${heading}'`), `${test} reads the blocks under "${heading}"`)
  }
})

t.test('the helpers read what GitHub shows', async (t) => {
  t.equal(slug('Metrics and shared limits: the `observe` profile'), 'metrics-and-shared-limits-the-observe-profile')
  t.equal(slug('Traces (OpenTelemetry)'), 'traces-opentelemetry')
  t.equal(slug('Node.js'), 'nodejs')
  t.same([...anchors('# A\n## B b\n```sh\n# not a heading\n```\n## B b\n')], ['a', 'b-b', 'b-b-1'])
  t.same(links('[a](x.md) `[b](y.md)` ![c](z.png)\n```sh\n[d](w.md)\n```\n'), ['x.md', 'z.png'])
  t.throws(() => codeBlocks('```ts\nopen\n'), /line 1 is not closed/)
  t.same(codeBlocks('<!-- not run: why -->\n```sh\nx\n```\n\n```sh\ny\n```\n').map((block) => block.note), ['not run: why', undefined])
  t.same(tableRows('## T\n| a | b | c |\n|---|---|---|\n| `x` | | z |\n', 'T'), [['a', 'b', 'c'], ['`x`', '', 'z']])
})
