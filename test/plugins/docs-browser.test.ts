import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import t from 'tap'
import { build } from '../helpers/build.js'

const CHROMIUM = '/usr/bin/chromium'
// The README's picture: refreshed only on request, so a test run leaves the tree as it was.
const SCREENSHOT = process.env.UPDATE_DOCS_SCREENSHOT === '1' ? new URL('../../docs/docs-screenshot.png', import.meta.url) : undefined

t.test('/docs in a real browser: POST /plants rendered, nothing loaded from elsewhere', async (t) => {
  const app = await build(t)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })

  // t.testdir() makes a fresh directory at each call: call it once.
  const dir = t.testdir()
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 }
  })
  t.teardown(() => context.close())

  const requested: string[] = []
  const problems: string[] = []
  context.on('request', (request) => { requested.push(request.url()) })
  context.on('requestfailed', (request) => { problems.push(`failed: ${request.url()}`) })
  const page = context.pages()[0] ?? await context.newPage()
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`) })
  page.on('pageerror', (error) => { problems.push(`page: ${error.message}`) })

  const response = await page.goto(`${origin}/docs`)
  t.equal(response?.status(), 200)
  t.equal(await page.title(), 'Plant Store API')

  // swagger-ui renders each operation as an .opblock: find POST /plants and open it.
  const post = page.locator('.opblock.opblock-post', { has: page.locator('[data-path="/plants"]') })
  await post.waitFor({ timeout: 20_000 })
  t.match(await post.locator('.opblock-summary-description').innerText(), /Create a plant/)
  await post.locator('.opblock-summary').click()
  await post.locator('.responses-table').waitFor()
  t.match(await page.locator('.info .title').innerText(), /Plant Store/)
  t.match(await page.locator('.info .title').innerText(), /OAS 3\.1/, 'presents the 3.1 document')
  t.ok(await page.locator('.models, .models-control').count() > 0, 'the schemas section is rendered')

  const png = await page.screenshot({ fullPage: true })
  writeFileSync(join(dir, 'docs.png'), png)
  if (SCREENSHOT !== undefined) writeFileSync(SCREENSHOT, png)

  const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))
  t.same(elsewhere, [], 'every request stayed on the service')
  t.ok(requested.some((url) => url.endsWith('/docs/static/swagger-ui-bundle.js')), 'the scripts came from the service')
  t.ok(requested.some((url) => url.endsWith('/docs/json')), 'the document came from the service')
  t.same(problems, [], 'no failed request, no console error')
})
