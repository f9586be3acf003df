// Loaded with --import (NODE_OPTIONS): the process, and npm's checks in it, report the
// Node.js version in REPORTED_NODE (20.20.2, the end-of-life line the service refuses,
// unless set), whatever Node.js runs the test.
const version = process.env.REPORTED_NODE ?? '20.20.2'
Object.defineProperty(process, 'versions', { value: { ...process.versions, node: version }, configurable: true })
Object.defineProperty(process, 'version', { value: `v${version}`, configurable: true })
