import t from 'tap'
import * as main from '../../src/index.js'

t.test('the main entry is the app builder and its configuration', async (t) => {
  t.same(Object.keys(main).sort(), ['ConfigError', 'buildApp', 'loadConfig'])
  const app = await main.buildApp(main.loadConfig({ API_TOKENS: 'x', LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' }))
  t.teardown(() => app.close())
  t.equal((await app.inject('/health')).statusCode, 200)
})
