/** The Node.js lines Plant Store runs on, as package.json's engines names them: 22 from 22.13, and 24. */
export const SUPPORTED_NODE_LINES = 'Node.js 22 (22.13 or later) or 24'

/** Why this Node.js cannot run the service, or undefined when it can. */
export function unsupportedNode (version: string = process.versions.node): string | undefined {
  const [major, minor] = version.split('.').map(Number)
  if (major > 22 || (major === 22 && minor >= 13)) return undefined
  return `Node.js ${version} is not supported: use ${SUPPORTED_NODE_LINES} (see the README, "Node.js").`
}
