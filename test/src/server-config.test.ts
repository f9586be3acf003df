import t from 'tap'
import { failedStart } from '../helpers/server.js'

// Apart from server.test.ts, whose process starts already fill its time limit on a busy machine.
t.test('a loose number, or a NODE_ENV typo without tokens, stops the start with one line and exit code 1', async (t) => {
  const [loose, typo] = await Promise.all([failedStart({ API_TOKENS: 'a', PORT: '0x10' }), failedStart({ NODE_ENV: 'prodution' })])
  t.same(loose, { code: 1, stderr: 'plant-store: PORT="0x10" is not valid: expected a TCP port, an integer from 0 to 65535\n' })
  t.equal(typo.code, 1)
  t.match(typo.stderr, /^plant-store: API_TOKENS or API_TOKENS_FILE must name at least one token when NODE_ENV="prodution": [^\n]+\n$/)
})
