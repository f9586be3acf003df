// Loaded with --import (NODE_OPTIONS): the process reports Node.js 20, the
// end-of-life line the service refuses, whatever Node.js runs the test.
Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.20.2' }, configurable: true })
