import t from 'tap'
import { classifyAddress, refusedAddress } from '../../../src/webhooks/address.js'

// The rule is pure: none of these addresses is ever connected to.
const REFUSED: Record<string, string[]> = {
  'a loopback address': ['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '::127.0.0.1', '::7f00:1',
    '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '2002:7f00:1:ffff::1'],
  'a private address': ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255',
    'fc00::1', 'fd12:3456::1', 'fdff:ffff::1', 'fec0::1', '::ffff:10.0.0.1', '::ffff:c0a8:101', '::ffff:0:ac10:1', '64:ff9b::a00:1', '2002:c0a8:101::1', '::10.1.2.3', '::ffff:10.1.2.3%eth0'],
  'a link-local address': ['169.254.0.1', '169.254.255.255', 'fe80::1', 'fe80::1%eth0', 'febf::1', '::ffff:169.254.1.1', '2002:a9fe:101::'],
  'a multicast address': ['224.0.0.1', '239.255.255.255', 'ff02::1', 'ff0e::1', '::ffff:224.0.0.251', '64:ff9b::e000:1'],
  'an unspecified address': ['0.0.0.0', '0.1.2.3', '::', '::2', '::ffff:0.0.0.0', '2002::'],
  'the broadcast address': ['255.255.255.255', '::ffff:255.255.255.255'],
  'a carrier-grade NAT address': ['100.64.0.1', '100.127.255.255', '::ffff:100.64.0.1', '64:ff9b::6440:1'],
  'a reserved address': ['192.0.0.1', '192.0.2.1', '192.88.99.1', '198.18.0.1', '198.19.255.255', '198.51.100.1', '203.0.113.1', '240.0.0.1', '254.255.255.255',
    '2001:db8::1', '2001::1', '2001:2::1', '3fff::1', '64:ff9b:1::a00:1', '100::1', '5f00::1', '4000::1', 'e000::1', '::8.8.8.8', '::808:808', 'not an address', ''],
  'the cloud metadata address': ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1']
}

const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0',
  '169.253.255.255', '169.255.0.0', '126.255.255.255', '128.0.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255', '1.0.0.0',
  '2606:4700:4700::1111', '2a00:1450:4001::200e', '2001:4860:4860::8888', '2c0f:fb50::1', '3ffe:ffff::1',
  '::ffff:8.8.8.8', '::ffff:808:808', '::ffff:0:808:808', '64:ff9b::8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']

t.test('every refused range, and the IPv6 forms that embed one, name their rule', async (t) => {
  for (const [rule, addresses] of Object.entries(REFUSED)) {
    for (const address of addresses) t.equal(classifyAddress(address)?.name, rule, `${address}: ${rule}`)
  }
})

t.test('public unicast addresses, including just outside each range, pass', async (t) => {
  for (const address of PUBLIC) t.equal(classifyAddress(address), undefined, address)
})

t.test('WEBHOOK_ALLOW_PRIVATE lifts every rule but those no receiver can be behind', async (t) => {
  const always = ['an unspecified address', 'the broadcast address', 'a multicast address', 'the cloud metadata address']
  for (const [rule, addresses] of Object.entries(REFUSED)) {
    for (const address of addresses) {
      t.equal(refusedAddress(address, false), rule, `${address} refused`)
      t.equal(refusedAddress(address, true), always.includes(rule) ? rule : undefined, `${address} with private targets allowed`)
    }
  }
  for (const address of PUBLIC) t.equal(refusedAddress(address, false), undefined, address)
})
