import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { openBrowser } from '../helpers/browser.js'
import { build } from '../helpers/build.js'

// The README's picture (docs/docs-screenshot.png): refreshed only on request, so a test run leaves the tree as it was.
const SCREENSHOT = process.env.UPDATE_DOCS_SCREENSHOT === '1' ? new URL('../../docs/docs-screenshot.png', import.meta.url) : undefined

t.test('/docs in a real browser: every operation rendered, nothing loaded from elsewhere', async (t) => {
  const app = await build(t)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })

  // t.testdir() makes a fresh directory at each call: call it once.
  const dir = t.testdir()
  const context = await openBrowser(t, dir)
  if (context === undefined) return

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
  await post.locator('.opblock-summary').click()

  // Every operation of the document, each under its method and path, with its summary.
  const operation = (method: string, path: string) => page.locator(`.opblock.opblock-${method}`, { has: page.locator(`[data-path="${path}"]`) })
  const summaries = [['get', '/plants', /List plants/], ['get', '/plants/{id}', /Read a plant/], ['delete', '/plants/{id}', /Delete a plant/],
    ['get', '/health', /Liveness/], ['get', '/ready', /Readiness/], ['get', '/openapi.json', /API document/], ['get', '/docs', /API reference/],
    ['get', '/metrics', /Metrics for Prometheus/]] as const
  for (const [method, path, summary] of summaries) {
    t.match(await operation(method, path).locator('.opblock-summary-description').innerText(), summary, `${method.toUpperCase()} ${path}`)
  }
  // As many as the document has: a route the page left out would show here.
  const document = (await app.inject('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>>, webhooks: Record<string, Record<string, unknown>> }
  const operations = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap((item) => Object.keys(item).filter((key) => key !== 'parameters'))
  t.equal(await page.locator('.opblock').count(), operations.length, 'every operation of the document, and no other')

  // The list, opened: its query parameters, and the Link header of its 200.
  const list = operation('get', '/plants')
  await list.locator('.opblock-summary').click()
  await list.locator('.responses-table').waitFor()
  t.same(await list.locator('.parameters .parameter__name').allInnerTexts(), ['limit', 'tag', 'cursor'], 'its query parameters')
  const ok = list.locator('.responses-table .response[data-code="200"]')
  t.match(await ok.locator('.response-col_description').innerText(), /Link[\s\S]*rel="next"/, 'the Link header of a page')
  const unauthorized = list.locator('.responses-table .response[data-code="401"]')
  t.match(await unauthorized.locator('.response-col_description').innerText(), /WWW-Authenticate/, 'the challenge of a 401')

  const remove = operation('delete', '/plants/{id}')
  await remove.locator('.opblock-summary').click()
  await remove.locator('.responses-table').waitFor()
  t.same(await remove.locator('.responses-table .response').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-code'))),
    ['204', '400', '401', '403', '404', '408', '412', '429', '503'], 'DELETE /plants/{id}: its statuses')
  await remove.locator('.opblock-summary').click()
  await remove.locator('.opblock-summary button').first().blur()

  const png = await page.screenshot({ fullPage: true })
  writeFileSync(join(dir, 'docs.png'), png)
  if (SCREENSHOT !== undefined) writeFileSync(SCREENSHOT, png)

  const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))
  t.same(elsewhere, [], 'every request stayed on the service')
  t.ok(requested.some((url) => url.endsWith('/docs/static/swagger-ui-bundle.js')), 'the scripts came from the service')
  t.ok(requested.some((url) => url.endsWith('/docs/json')), 'the document came from the service')
  t.same(problems, [], 'no failed request, no console error')
})
