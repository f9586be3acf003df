import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'node_modules/**']
  }),
  {
    rules: {
      // The TypeBox convention: a schema constant and its Static type share one
      // name. The compiler already rejects a real redeclaration.
      '@typescript-eslint/no-redeclare': 'off'
    }
  }
]
