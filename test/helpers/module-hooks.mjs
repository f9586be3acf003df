// Module hooks (see loaded-modules.ts): tell the main thread of every module resolved.
let port

export function initialize (data) {
  port = data.port
}

export async function resolve (specifier, context, next) {
  const result = await next(specifier, context)
  port.postMessage(result.url)
  return result
}
