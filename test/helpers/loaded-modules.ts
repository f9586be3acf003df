import { createRequire, register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'

/**
 * Records every module this process loads from now on: ES modules through a
 * resolve hook (module.register), CommonJS ones through require's cache.
 * Call it before importing what is to be watched.
 */
export function watchModules (): () => Promise<string[]> {
  const resolved: string[] = []
  const { port1, port2 } = new MessageChannel()
  port1.on('message', (url: string) => resolved.push(url))
  port1.unref()
  register(new URL('./module-hooks.mjs', import.meta.url), { data: { port: port2 }, transferList: [port2] })
  const cache = createRequire(import.meta.url).cache
  return async () => {
    // The hook thread posts its messages asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 50))
    return [...resolved, ...Object.keys(cache)]
  }
}
