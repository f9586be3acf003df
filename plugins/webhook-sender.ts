import type { FastifyPluginAsync } from 'fastify'
import type { WebhookStore } from '../src/store/webhook-types.js'
import { WebhookSender, type SenderOptions } from '../src/webhooks/sender.js'

export type WebhookSenderOptions = Omit<SenderOptions, 'log'> & { store: WebhookStore }

function positive (value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
}

/** Sends the outbox's deliveries in the background, from the app's start (onReady) to its close (onClose). */
const webhookSender: FastifyPluginAsync<WebhookSenderOptions> = async (fastify, options) => {
  if (typeof options.store?.claim !== 'function') throw new TypeError('webhook-sender: the store option must be a WebhookStore')
  for (const name of ['timeout', 'retention', 'disableAfter', 'perEndpoint', 'total', 'pollInterval', 'pruneInterval', 'grace'] as const) {
    if (options[name] !== undefined && !positive(options[name])) throw new TypeError(`webhook-sender: ${name} must be a positive number of milliseconds or attempts`)
  }
  if (!Array.isArray(options.schedule) || !options.schedule.every((delay) => Number.isFinite(delay) && delay >= 0)) {
    throw new TypeError('webhook-sender: schedule must be a list of delays in milliseconds')
  }
  const sender = new WebhookSender({ ...options, schedule: [...options.schedule], log: fastify.log.child({ component: 'webhooks' }) })
  fastify.addHook('onReady', async () => sender.start())
  fastify.addHook('onClose', async () => sender.stop())
}

export default webhookSender
