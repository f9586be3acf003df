import { readFileSync } from 'node:fs'
import t from 'tap'
import { NODE_FLAGS } from './helpers/server.js'

const read = (file: string): string => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')

t.test('npm start, the image and the compose file start the service with the same Node.js options, the tests\' servers too', async (t) => {
  t.ok(NODE_FLAGS.includes('--max-semi-space-size=16'), `npm start bounds the young generation: ${NODE_FLAGS.join(' ')}`)
  const command = ['node', ...NODE_FLAGS, 'dist/src/server.js']
  const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))
  t.same(JSON.parse(cmd?.[1] ?? 'null'), command, 'the image\'s CMD')
  t.match(read('docker-compose.yml'), `exec ${command.join(' ')}\n`, 'the compose file\'s command')
})
