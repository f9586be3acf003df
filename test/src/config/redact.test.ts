import t from 'tap'
import { configSecrets, databaseSecrets, endpointSecrets, redactDatabaseUrl, redactEndpoint, redactSecrets, redactUrl } from '../../../src/config/redact.js'

t.test('credential-like query parameters lose their values, whatever their case or encoding', async (t) => {
  const cases: Array<[string, string]> = [
    ['/plants/1?access_token=abc', '/plants/1?access_token=[REDACTED]'],
    ['/plants?limit=5&TOKEN=abc&tag=x', '/plants?limit=5&TOKEN=[REDACTED]&tag=x'],
    ['/p?api_key=1&key=2&Password=3&client_secret=4&x-signature=5&apiKey=6', '/p?api_key=[REDACTED]&key=[REDACTED]&Password=[REDACTED]&client_secret=[REDACTED]&x-signature=[REDACTED]&apiKey=[REDACTED]'],
    ['/p?acc%65ss_token=abc&%zz=1', '/p?acc%65ss_token=[REDACTED]&%zz=1'],
    ['/p?access+token=abc&token', '/p?access+token=[REDACTED]&token'],
    ['/p?token=a=b&limit=1', '/p?token=[REDACTED]&limit=1'],
    ['/plants/1', '/plants/1'],
    ['/plants?limit=5&cursor=abc', '/plants?limit=5&cursor=abc']
  ]
  for (const [url, redacted] of cases) t.equal(redactUrl(url), redacted, url)
})

t.test('a database URL loses its password even when malformed', async (t) => {
  const cases: Array<[string, string]> = [
    ['postgres://admin:hunter2@db:5432/plants', 'postgres://admin:[REDACTED]@db:5432/plants'],
    ['mysql://admin:hunter2@db/plants', 'mysql://admin:[REDACTED]@db/plants'],
    ['postgres:/admin:hun@ter2@db', 'postgres:[REDACTED]@db'],
    [' postgres://admin:hunter2@db', ' postgres:[REDACTED]@db'],
    ['postgres://db/plants?password=hunter2&sslmode=require', 'postgres://db/plants?password=[REDACTED]&sslmode=require'],
    ['postgres://db:5432/plants', 'postgres://db:5432/plants'],
    ['sqlite:./data/plants.db', 'sqlite:./data/plants.db']
  ]
  for (const [url, redacted] of cases) t.equal(redactDatabaseUrl(url), redacted, url)
  t.same(databaseSecrets('postgres://admin:p%40ss@db/x'), ['p%40ss', 'p@ss'])
  t.same(databaseSecrets('postgres://admin:%zz@db/x'), ['%zz'], 'a password that does not decode')
  t.same(databaseSecrets('postgres://admin@db/x'), [])
  t.same(databaseSecrets('postgres://admin:@db/x'), [])
})

t.test('a collector\'s endpoint loses its user info whole, and credential-like query values, even when malformed', async (t) => {
  const cases: Array<[string, string]> = [
    ['http://user:secret@collector:4318/v1/traces', 'http://[REDACTED]@collector:4318/v1/traces'],
    ['https://token@collector', 'https://[REDACTED]@collector'],
    ['https://collector/v1/traces?api_key=secret&x=1', 'https://collector/v1/traces?api_key=[REDACTED]&x=1'],
    ['user:sec ret@collector:4318', '[REDACTED]@collector:4318'],
    ['http://collector:4318', 'http://collector:4318']
  ]
  for (const [url, redacted] of cases) t.equal(redactEndpoint(url), redacted, url)
  t.same(endpointSecrets('http://user:p%40ss@collector'), ['user:p%40ss', 'user:p@ss', 'p%40ss', 'p@ss'])
  t.same(endpointSecrets('http://t%zz@collector'), ['t%zz'], 'user info that does not decode')
  t.same(endpointSecrets('http://collector:4318'), [])
})

t.test("the configuration's secrets: the database's and Redis's passwords, the collector's user info", async (t) => {
  t.same(configSecrets({ databaseUrl: 'sqlite:./data/plants.db' }), [])
  t.same(configSecrets({
    databaseUrl: 'postgres://app:db-pass@db/plants',
    redisUrl: 'redis://:redis-pass@cache:6379/0',
    tracing: { url: 'http://user:otlp-pass@collector:4318' }
  }), ['db-pass', 'db-pass', 'redis-pass', 'redis-pass', 'user:otlp-pass', 'otlp-pass'])
})

t.test('secrets are replaced as written and as JSON writes them', async (t) => {
  t.equal(redactSecrets('password "hun\\"ter2" and hun"ter2', ['hun"ter2', '']), 'password "[REDACTED]" and [REDACTED]')
})
