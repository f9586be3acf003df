// Preloaded (node --import) into the server under test, which stays as it ships:
// the bench asks over the IPC channel for process.cpuUsage() before and after a
// window, so the server's CPU is measured, not autocannon's.
process.on('message', (message) => {
  if (message === 'cpu') process.send?.(process.cpuUsage())
})
// The channel alone must not keep a server alive that was told to stop.
process.channel?.unref()

export {}
