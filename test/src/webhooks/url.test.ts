import t from 'tap'
import { checkEndpointUrl } from '../../../src/webhooks/url.js'

const PUBLIC_ONLY = 'webhooks go to public addresses unless the service runs with WEBHOOK_ALLOW_PRIVATE=true'

t.test('absolute http and https URLs with a host name or a public address pass', async (t) => {
  for (const url of ['https://example.com/hooks', 'http://example.com:8080/a?b=c#d', 'https://8.8.8.8/', 'https://[2606:4700::1111]:8443/x',
    'http://localhost:3000/', 'https://hooks.internal/', `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`]) {
    t.equal(checkEndpointUrl(url, false), undefined, url)
  }
})

t.test('what is not an absolute http or https URL is refused', async (t) => {
  for (const url of ['', 'example.com', '/hooks', '//example.com/x', 'ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)',
    'gopher://example.com', 'data:text/plain,x', 'http://', 'https://exa mple.com', 'http://[::1/']) {
    t.match(checkEndpointUrl(url, false), /^must (be an absolute http or https URL|not contain spaces or control characters)$/, JSON.stringify(url))
  }
  t.equal(checkEndpointUrl('ftp://example.com/', true), 'must be an absolute http or https URL')
})

t.test('spaces and control characters, which the URL parser would drop, are refused', async (t) => {
  for (const url of [' https://example.com/', 'https://example.com/ ', 'https://exa\tmple.com/', 'https://example.com/\n', 'https://example.com/\u007f', 'https://example.com/\u0000']) {
    t.equal(checkEndpointUrl(url, false), 'must not contain spaces or control characters', JSON.stringify(url))
  }
})

t.test('user info is refused', async (t) => {
  for (const url of ['https://user@example.com/', 'https://user:secret@example.com/', 'https://:secret@example.com/']) {
    t.equal(checkEndpointUrl(url, true), 'must not contain user info (a user name or password)', url)
  }
})

t.test('more than 2048 characters is refused', async (t) => {
  t.equal(checkEndpointUrl(`https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`, false), 'must be at most 2048 characters long')
})

t.test('a literal forbidden address is refused with its rule, in every spelling the URL parser accepts', async (t) => {
  const cases: Array<[string, string]> = [
    ['http://127.0.0.1:3000/hook', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://127.1/', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://0x7f.0.0.1/', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://2130706433/', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://017700000001/', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://127.0.0.1./', `must not name a loopback address (127.0.0.1): ${PUBLIC_ONLY}`],
    ['http://[::1]/', `must not name a loopback address (::1): ${PUBLIC_ONLY}`],
    ['http://[::ffff:127.0.0.1]/', `must not name a loopback address (::ffff:7f00:1): ${PUBLIC_ONLY}`],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', `must not name a loopback address (::ffff:7f00:1): ${PUBLIC_ONLY}`],
    ['https://10.1.2.3/', `must not name a private address (10.1.2.3): ${PUBLIC_ONLY}`],
    ['https://[fd00::1]/', `must not name a private address (fd00::1): ${PUBLIC_ONLY}`],
    ['https://169.254.1.1/', `must not name a link-local address (169.254.1.1): ${PUBLIC_ONLY}`],
    ['https://[fe80::1]/', `must not name a link-local address (fe80::1): ${PUBLIC_ONLY}`],
    ['https://100.64.0.1/', `must not name a carrier-grade NAT address (100.64.0.1): ${PUBLIC_ONLY}`],
    ['https://[2002:7f00:1::]/', `must not name a loopback address (2002:7f00:1::): ${PUBLIC_ONLY}`],
    ['https://0.0.0.0/', 'must not name an unspecified address (0.0.0.0): webhooks go to public addresses'],
    ['https://224.0.0.1/', 'must not name a multicast address (224.0.0.1): webhooks go to public addresses'],
    ['https://255.255.255.255/', 'must not name the broadcast address (255.255.255.255): webhooks go to public addresses'],
    ['http://169.254.169.254/latest/meta-data/', 'must not name the cloud metadata address (169.254.169.254): webhooks go to public addresses'],
    ['http://[fd00:ec2::254]/', 'must not name the cloud metadata address (fd00:ec2::254): webhooks go to public addresses'],
    ['http://[::ffff:a9fe:a9fe]/', 'must not name the cloud metadata address (::ffff:a9fe:a9fe): webhooks go to public addresses']
  ]
  for (const [url, message] of cases) t.equal(checkEndpointUrl(url, false), message, url)
})

t.test('WEBHOOK_ALLOW_PRIVATE admits loopback and private literals, never the metadata address', async (t) => {
  for (const url of ['http://127.0.0.1:3000/hook', 'http://[::1]/', 'https://10.1.2.3/', 'https://[fd00::1]/', 'https://169.254.1.1/', 'https://100.64.0.1/', 'https://192.0.2.1/']) {
    t.equal(checkEndpointUrl(url, true), undefined, url)
  }
  for (const url of ['http://169.254.169.254/', 'http://[fd00:ec2::254]/', 'http://0.0.0.0/', 'http://224.0.0.1/']) {
    t.match(checkEndpointUrl(url, true), /^must not name /, url)
  }
})
