import t from 'tap'
import { parseEntityTags } from '../../plugins/plants/preconditions.js'

// The reader alone, on text Node would trim before a route sees it.
t.test('parseEntityTags: a list of entity tags, empty elements and spaces allowed, in one pass', async (t) => {
  t.equal(parseEntityTags(' * '), '*')
  t.same(parseEntityTags('"a", ,W/"b" , \t'), [{ weak: false, opaque: 'a' }, { weak: true, opaque: 'b' }])
  t.same(parseEntityTags('  '), [])
  t.same(parseEntityTags(''), [])
  for (const malformed of ['*,', '"a"b', '"a', 'a', 'W/', '"a\u0100"', '", "']) t.equal(parseEntityTags(malformed), undefined, JSON.stringify(malformed))
})
