import t from 'tap'
import { failedStart } from '../helpers/server.js'

// Apart from server.test.ts, whose process starts already fill its time limit on a busy machine.
t.test('a loose number, a NODE_ENV typo without tokens, or a bad DATABASE_URL stops the start with one line and exit code 1', async (t) => {
  const [loose, typo, url, endpoint] = await Promise.all([
    failedStart({ API_TOKENS: 'a', PORT: '0x10' }),
    failedStart({ NODE_ENV: 'prodution' }),
    failedStart({ API_TOKENS: 'a', DATABASE_URL: 'mysql://admin:hunter2@db/plants' }),
    failedStart({ API_TOKENS: 'a', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:hunter2@collector :4318' })
  ])
  t.same(loose, { code: 1, stderr: 'plant-store: PORT="0x10" is not valid: expected a TCP port, an integer from 0 to 65535\n' })
  t.equal(typo.code, 1)
  t.match(typo.stderr, /^plant-store: API_TOKENS or API_TOKENS_FILE must name at least one token when NODE_ENV="prodution": [^\n]+\n$/)
  t.same(url, { code: 1, stderr: 'plant-store: DATABASE_URL="mysql://admin:[REDACTED]@db/plants" is not valid: expected sqlite:<path>, sqlite::memory:, postgres://… or postgresql://…\n' }, 'never the password')
  t.same(endpoint, { code: 1, stderr: 'plant-store: OTEL_EXPORTER_OTLP_ENDPOINT="http://[REDACTED]@collector :4318" is not valid: expected an http:// or https:// URL of an OTLP/HTTP collector (unset: no tracing)\n' }, 'never the collector\'s credentials')
})
