import t from 'tap'
import { createMetrics } from '../../src/metrics/index.js'

t.test('metrics with no webhook store to watch (a host without the sender): the backlog reads 0, the scrape answers', async (t) => {
  const text = await createMetrics().registry.metrics()
  t.match(text, /^plant_store_webhook_backlog 0$/m)
  t.match(text, /^plant_store_webhook_oldest_pending_age_seconds 0$/m)
})
