import t from 'tap'
import { clientSuite } from '../../helpers/client-suite.js'

// One file a store, so that each runs within its own time limit.
clientSuite(t, 'sqlite')
