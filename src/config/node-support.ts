/**
 * The Node.js lines Plant Store runs on: 22 and 24. better-sqlite3 13, the first
 * that survives Node 24's finalizers, segfaults on Node 20, whose life ended in
 * April 2026; the rest of the dependencies declare Node 22 or later too.
 */
export const SUPPORTED_NODE_LINES = 'Node.js 22 or 24'

/** Why this Node.js cannot run the service, or undefined when it can. */
export function unsupportedNode (version: string = process.versions.node): string | undefined {
  if (Number(version.split('.')[0]) >= 22) return undefined
  return `Node.js ${version} is not supported: use ${SUPPORTED_NODE_LINES} (see the README, "Node.js").`
}
