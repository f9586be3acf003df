// The bench's OTLP collector in a process of its own, so that what it spends is not
// counted as the traced app's: sends its URL once listening, and what it received when asked.
import { otlpSink } from './otlp-sink.js'

const sink = await otlpSink()
process.send?.({ url: sink.url })
process.on('message', (prefix: string) => { process.send?.({ received: sink.received(prefix) }) })
process.on('disconnect', () => { sink.close().then(() => process.exit(0)) })
