/** The hooks of each route, read from printRoutes({ includeHooks: true, commonPrefix: false }). */
export function hooksByRoute (tree: string): Map<string, string[]> {
  const hooks = new Map<string, string[]>()
  // printRoutes nests a path under the path it extends (`└── /:id` under `/v1/plants`);
  // a line without a branch names other methods of the node above it.
  const stack: Array<{ indent: number, path: string }> = []
  let keys: string[] = []
  for (const line of tree.split('\n')) {
    const node = /^(.*?)(\/\S*) \(([A-Z, ]+)\)$/.exec(line)
    const hook = /• \((\w+)\) \[(.*)\]/.exec(line)
    if (node !== null) {
      const indent = node[1].length
      if (node[1].includes('──')) {
        while (stack.length > 0 && (stack.at(-1) as { indent: number }).indent >= indent) stack.pop()
        stack.push({ indent, path: (stack.at(-1)?.path ?? '') + node[2] })
      }
      const path = (stack.at(-1) as { path: string }).path
      keys = node[3].split(', ').map((method) => `${method} ${path}`)
      for (const key of keys) hooks.set(key, [])
    } else if (hook !== null) {
      for (const key of keys) hooks.get(key)?.push(`${hook[1]} ${hook[2]}`)
    }
  }
  return hooks
}
