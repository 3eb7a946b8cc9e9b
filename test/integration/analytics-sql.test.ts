// DESIGN §4 "Analysts": POST /analytics/v1/sql runs one read-only SELECT over documented
// relations bound to the caller's organization, with ceilings. A hostile suite over the real
// engine (chdb, the product's migrations): two organizations with rows in every table, and
// every way out we know of — other organizations' rows, base tables, table functions, system
// tables, comments and quoting tricks, second statements, SETTINGS, writes, huge scans. Each
// must answer with 0 rows of the other organization and change nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../core/errors';
import { DEFAULT_ANALYTICS_CEILINGS, RELATIONS } from '../../core/analytics';
import { AnalyticsSql, type AnalyticsScope } from '../../stores/analytics-sql';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

let engine: EmbeddedClickHouse;
let sql: AnalyticsSql;
const A: AnalyticsScope = { orgId: 'org_a', projectIds: ['prj_a1', 'prj_a2'] };
const B: AnalyticsScope = { orgId: 'org_b', projectIds: ['prj_b1'] };
const MARK_B = 'SECRET-OF-B';

const t = (s: string): string => `'${s}'`;
/** Yesterday (UTC): inside the documented examples' "last 30 days". */
const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

async function seed(): Promise<void> {
  const ch = engine.ch;
  const now = `${DAY} 10:00:00.000`;
  for (const [org, project, text, n] of [['org_a', 'prj_a1', 'hello from a', 3], ['org_b', 'prj_b1', MARK_B, 5]] as const) {
    for (let i = 0; i < n; i += 1) {
      const id = `${org}-m${i}`;
      const country = i % 2 === 0 ? 'DE' : 'FR';
      await ch.client.command({ query: `INSERT INTO ${ch.table('sms_messages')} VALUES (${t(id)}, ${t(org)}, ${t(project)}, 'tok', 'http', 'outbound', NULL, 'delivered', 0, 'Demo', ${t(country)}, '+4915112345678', '4915112345678', 5, ${t(text)}, ${t(text)}, 1, 'GSM-7', false, false, true, 65000, 65000, 'EUR', ${t(now)}, ${t(now)}, NULL, ${t(now)}, ${t(`${DAY} 10:00:01.500`)}, ${t(now)})` });
      await ch.client.command({ query: `INSERT INTO ${ch.table('sms_transitions')} VALUES (${t(id)}, ${t(org)}, ${t(project)}, 'tok', NULL, 1, 'sent', 0, ${t(now)}), (${t(id)}, ${t(org)}, ${t(project)}, 'tok', NULL, 2, 'delivered', 0, ${t(`${DAY} 10:00:01.500`)})` });
      await ch.client.command({ query: `INSERT INTO ${ch.table('dlr_attempts')} VALUES (${t(id)}, ${t(org)}, 'tok', 2, 'delivered', 1, 'delivered', 200, 12, NULL, ${t(`https://${org}.example/hook`)}, ${t(now)})` });
      await ch.client.command({ query: `INSERT INTO ${ch.table('lookups')} VALUES (${t(`${org}-l${i}`)}, ${t(org)}, ${t(project)}, 'tok', 'http', 'delivered', NULL, 'DE', '+49151', '49151', 'active', NULL, NULL, false, false, ${t(text)}, true, 5000, 'EUR', ${t(now)}, ${t(now)}, ${t(now)})` });
      await ch.client.command({ query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, email, tags, created_at, updated_at) VALUES (${t(project)}, ${t(`u${i}`)}, ${t(`${project}-u${i}`)}, 1, 0, ${t(`${text}@x.example`)}, ['vip'], ${t(now)}, ${t(now)})` });
      await ch.client.command({ query: `INSERT INTO ${ch.table('events')} (project_id, datasource_id, event_type, user_id, audience_id, event_id, event_date, received_at, source, version) VALUES (${t(project)}, 'ds', 'purchase', ${t(`u${i}`)}, 'x', ${t(`${text}-e${i}`)}, ${t(now)}, ${t(now)}, 'api', 1)` });
    }
  }
}

async function rows(query: string, scope: AnalyticsScope = A): Promise<Array<Record<string, unknown>>> {
  const result = await sql.run(query, 'JSONEachRow', scope);
  return result.body.toString('utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function refusal(query: string, scope: AnalyticsScope = A): Promise<AppError> {
  try {
    const got = await sql.run(query, 'JSONEachRow', scope);
    throw new Error(`expected a refusal, got ${got.body.toString('utf8').slice(0, 300)}`);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    expect(err.status).toBe(400);
    return err;
  }
}

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['sms_messages', 'sms_transitions', 'dlr_attempts', 'lookups', 'audience', 'events']) {
    const r = await (await engine.ch.client.query({ query: `SELECT count() AS n FROM ${engine.ch.table(table)}`, format: 'JSONEachRow' })).json<{ n: string }>();
    out[table] = Number(r[0]?.n);
  }
  return out;
}

let before: Record<string, number>;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('analytics_db');
  await seed();
  before = await counts();
  sql = new AnalyticsSql(engine.ch);
}, 120_000);

afterAll(async () => {
  expect(await counts()).toEqual(before); // 0 writes, whatever was tried
  expect(await engine.ch.client.query({ query: `EXISTS TABLE ${engine.ch.table('pwned')}`, format: 'JSONEachRow' }).then((r) => r.json())).toEqual([{ result: 0 }]);
  await engine.close();
});

describe('DESIGN §4 Analysts: each relation is the caller organization\'s', () => {
  test.each(RELATIONS.map((r) => r.name))('%s: every row is of org A, and B sees only its own', async (name) => {
    const a = await rows(`SELECT * FROM ${name}`);
    const b = await rows(`SELECT * FROM ${name}`, B);
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(a.length); // B has 5 of each, A 3 (dlrs: 2 per message)
    expect(JSON.stringify(a)).not.toContain(MARK_B);
    expect(JSON.stringify(a)).not.toContain('org_b');
    expect(JSON.stringify(a)).not.toContain('prj_b1');
  });

  test('the views have exactly the documented columns and types (core/analytics/relations.ts)', async () => {
    for (const r of RELATIONS) {
      const described = await (await engine.ch.client.query({ query: `DESCRIBE TABLE (SELECT * FROM ${engine.ch.table(r.view)}(${r.boundBy === 'org' ? "org = 'x'" : "projects = ['x']"}))`, format: 'JSONEachRow' })).json<{ name: string; type: string }>();
      expect({ relation: r.name, columns: described.map((d) => `${d.name} ${d.type}`) }).toEqual({ relation: r.name, columns: r.columns.map((c) => `${c.name} ${c.type}`) });
    }
  });

  test('the five documented examples run (docs/analytics.md)', async () => {
    const delivery = await rows("SELECT country, toDate(created_at) AS day, countIf(status = 'delivered') / count() AS delivery_rate FROM messages GROUP BY country, day ORDER BY day, country");
    expect(delivery).toEqual([{ country: 'DE', day: DAY, delivery_rate: 1 }, { country: 'FR', day: DAY, delivery_rate: 1 }]);
    const p95 = await rows("SELECT country, quantile(0.95)(dateDiff('millisecond', sent_at, delivered_at)) AS p95_ms FROM messages WHERE status = 'delivered' GROUP BY country ORDER BY country");
    expect(p95).toEqual([{ country: 'DE', p95_ms: 1500 }, { country: 'FR', p95_ms: 1500 }]);
    const spend = await rows('SELECT project_id, currency, sum(price) AS spend FROM messages WHERE charged GROUP BY project_id, currency');
    expect(spend).toEqual([{ project_id: 'prj_a1', currency: 'EUR', spend: 0.195 }]);
    expect(await rows('SELECT event_type, toDate(event_date) AS day, count() AS events FROM events GROUP BY event_type, day')).toEqual([{ event_type: 'purchase', day: DAY, events: '3' }]);
    expect(await rows('SELECT arrayJoin(tags) AS tag, count() AS contacts FROM contacts GROUP BY tag')).toEqual([{ tag: 'vip', contacts: '3' }]);
  });

  test('every example of docs/analytics.md runs as written', async () => {
    const page = readFileSync(join(__dirname, '../../docs/analytics.md'), 'utf8');
    const examples = [...page.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(examples).toHaveLength(5);
    for (const example of examples) expect({ example, rows: (await rows(example)).length > 0 }).toEqual({ example, rows: true });
  });

  test('WITH subqueries, UNION, joins and IN (SELECT ...) over the relations are fine', async () => {
    expect(await rows('WITH d AS (SELECT message_id FROM dlrs WHERE status = \'delivered\') SELECT count() AS n FROM messages WHERE id IN (SELECT message_id FROM d)')).toEqual([{ n: '3' }]);
    expect(await rows('SELECT id FROM messages UNION ALL SELECT id FROM lookups ORDER BY id')).toHaveLength(6);
    expect(await rows('SELECT m.id, count() AS n FROM messages AS m JOIN dlrs AS d ON d.message_id = m.id GROUP BY m.id ORDER BY m.id')).toHaveLength(3);
  });
});

describe('DESIGN §4 Analysts: hostile queries reach no other organization and write nothing', () => {
  test('UNION into another organization: the union reads the caller\'s relations only', async () => {
    const got = await rows("SELECT text FROM messages UNION ALL SELECT text FROM messages WHERE text = 'SECRET-OF-B'");
    expect(JSON.stringify(got)).not.toContain(MARK_B);
    const e = await refusal('SELECT text FROM messages UNION ALL SELECT text FROM sms_platform.sms_messages');
    expect(e.code).toBe('ANALYTICS_QUERY_REFUSED');
  });

  test.each([
    ['base table, qualified', 'SELECT * FROM analytics_db.sms_messages', /unknown relation/],
    ['base table in a subquery', 'SELECT count() FROM messages WHERE id IN (SELECT id FROM analytics_db.sms_messages)', /unknown relation/],
    ['base table unqualified', 'SELECT * FROM sms_messages', /unknown relation/],
    ['the parameterized view by name', "SELECT * FROM analytics_messages(org = 'org_b')", /table functions/],
    ['the view qualified', "SELECT * FROM analytics_db.analytics_messages(org = 'org_b')", /table functions/],
    ['backquoted qualified', 'SELECT * FROM `analytics_db`.`sms_messages`', /unknown relation/],
    ['double-quoted qualified', 'SELECT * FROM "analytics_db"."sms_messages"', /unknown relation/],
    ['one quoted name with a dot', 'SELECT * FROM `analytics_db.sms_messages`', /unknown relation/],
    ['relation name qualified', 'SELECT * FROM analytics_db.messages', /unknown relation/],
    ['IN a table by name', "SELECT count() FROM messages WHERE id IN analytics_db.sms_messages", /reads a table/],
    ['system.tables', 'SELECT name FROM system.tables', /system tables/],
    ['system via subquery', 'SELECT count() FROM messages WHERE id IN (SELECT name FROM system.tables)', /system tables/],
    ['table function numbers', 'SELECT count() FROM numbers(1000000000000)', /table functions/],
    ['table function file', "SELECT * FROM file('/etc/passwd', 'LineAsString')", /table functions/],
    ['table function url', "SELECT * FROM url('http://169.254.169.254/', 'LineAsString')", /table functions/],
    ['table function remote', "SELECT * FROM remote('127.0.0.1', 'analytics_db', 'sms_messages')", /table functions/],
    ['table function merge', "SELECT * FROM merge('analytics_db', '.*')", /table functions/],
    ['table function s3', "SELECT * FROM s3('http://x/y', 'CSV')", /table functions/],
    ['table function input', "SELECT * FROM input('x String')", /table functions/],
    ['table function view', 'SELECT * FROM view(SELECT * FROM analytics_db.sms_messages)', /table functions/],
    ['dictGet', "SELECT dictGet('d', 'x', toUInt64(1)) FROM messages", /not allowed/],
    ['getSetting', "SELECT getSetting('readonly')", /not allowed/],
    ['joinGet', "SELECT joinGet('analytics_db.sms_messages', 'text', 'x')", /not allowed/],
    ['file() scalar', "SELECT file('/etc/passwd')", /not allowed/],
    ['hasColumnInTable', "SELECT hasColumnInTable('analytics_db', 'sms_messages', 'text')", /not allowed/],
    ['sleep', 'SELECT sleep(3)', /not allowed/],
    ['SETTINGS readonly=0', 'SELECT * FROM messages SETTINGS readonly = 0', /SETTINGS/],
    ['SETTINGS in a subquery', "SELECT * FROM (SELECT * FROM messages SETTINGS additional_table_filters = {'x': '1'})", /SETTINGS/],
    ['FORMAT clause', 'SELECT * FROM messages FORMAT TabSeparated', /FORMAT/],
    ['INTO OUTFILE', "SELECT * FROM messages INTO OUTFILE '/tmp/pwned'", /FORMAT, INTO OUTFILE/],
    ['query parameter', 'SELECT * FROM messages WHERE id = {analytics_org:String}', /parameters/],
    ['INSERT', "INSERT INTO analytics_db.sms_messages (id) VALUES ('x')", /only a SELECT/],
    ['INSERT SELECT', 'INSERT INTO analytics_db.pwned SELECT * FROM messages', /only a SELECT/],
    ['ALTER', 'ALTER TABLE analytics_db.sms_messages DELETE WHERE 1', /only a SELECT/],
    ['DROP', 'DROP TABLE analytics_db.sms_messages', /only a SELECT/],
    ['CREATE', 'CREATE TABLE analytics_db.pwned (x String) ENGINE = Memory', /only a SELECT/],
    ['TRUNCATE', 'TRUNCATE TABLE analytics_db.sms_messages', /only a SELECT/],
    ['SET', 'SET readonly = 0', /only a SELECT/],
    ['SYSTEM', 'SYSTEM DROP DNS CACHE', /only a SELECT/],
    ['SHOW', 'SHOW TABLES FROM analytics_db', /only a SELECT/],
    ['DESCRIBE', 'DESCRIBE TABLE analytics_db.sms_messages', /only a SELECT/],
    ['EXPLAIN', 'EXPLAIN SELECT * FROM analytics_db.sms_messages', /only a SELECT/],
    ['a CTE named like a relation', 'WITH messages AS (SELECT 1) SELECT * FROM messages', /may not take the name/],
    ['a CTE over a base table', 'WITH x AS (SELECT * FROM analytics_db.sms_messages) SELECT * FROM x', /unknown relation/],
  ])('%s is refused', async (_name, query, why) => {
    const e = await refusal(query);
    expect(e.code).toBe('ANALYTICS_QUERY_REFUSED');
    expect(e.message).toMatch(why);
  });

  test.each([
    ['a second statement', "SELECT 1; DROP TABLE analytics_db.sms_messages"],
    ['a second statement after a comment', "SELECT 1 /* ; */; INSERT INTO analytics_db.pwned VALUES (1)"],
    ['a line comment hiding nothing', "SELECT 1 -- ;\n; DROP TABLE analytics_db.sms_messages"],
    ['a string with a quote then a statement', "SELECT 'a'';'; DROP TABLE analytics_db.sms_messages"],
    ['unbalanced quoting', "SELECT * FROM messages WHERE text = 'x\\' ; DROP TABLE analytics_db.sms_messages --"],
  ])('%s: refused by the parser before anything runs', async (_name, query) => {
    const e = await refusal(query);
    expect(['ANALYTICS_QUERY_INVALID', 'ANALYTICS_QUERY_REFUSED']).toContain(e.code);
  });

  test('comments and quoting do not hide a table: /* */, --, unicode, line breaks in quoted names', async () => {
    expect((await refusal('SELECT * FROM /* messages */ analytics_db.sms_messages')).message).toMatch(/unknown relation/);
    expect((await refusal('SELECT * FROM messages -- x\n UNION ALL SELECT * FROM analytics_db.sms_messages')).message).toMatch(/unknown relation/);
    expect((await refusal('SELECT * FROM `messages\n      TableIdentifier messages`')).code).toBe('ANALYTICS_QUERY_REFUSED');
    expect((await refusal('SELECT * FROM `sms_messages`')).message).toMatch(/unknown relation/);
    // Cyrillic "е" in "mеssages": not the relation's name.
    expect((await refusal('SELECT * FROM `mеssages`')).message).toMatch(/unknown relation/);
    expect((await refusal('SELECT * FROM mеssages')).code).toBe('ANALYTICS_QUERY_INVALID');
    // Comments and quoted identifiers inside a legitimate query are fine.
    expect(await rows('SELECT /* a ; comment */ count() AS `n; x` FROM messages -- trailing')).toEqual([{ 'n; x': '3' }]);
    expect(JSON.stringify(await rows("SELECT text FROM messages WHERE text = '; SELECT * FROM analytics_db.sms_messages'"))).toBe('[]');
  });

  test('huge scans hit a ceiling, named in the 400 (typed ClickHouse errors, not message text)', async () => {
    const small = new AnalyticsSql(engine.ch, { maxExecutionSeconds: 1, maxRowsToRead: 1_000_000, maxBytesToRead: 1_000_000_000, maxResultRows: 2, maxResultBytes: 1_000_000, maxMemoryBytes: 50_000_000 });
    const limit = async (query: string): Promise<string> => {
      try {
        await small.run(query, 'JSON', A);
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect({ code: (err as AppError).code, query, detail: (err as AppError).message }).toMatchObject({ code: 'ANALYTICS_LIMIT_EXCEEDED' });
        return (err as AppError).message;
      }
      throw new Error('expected a ceiling');
    };
    expect(await limit('SELECT id FROM messages')).toMatch(/max_result_rows/);
    expect(await limit('SELECT count() FROM messages ARRAY JOIN range(1000000) AS a ARRAY JOIN range(1000000) AS b')).toMatch(/max_execution_time|max_rows_to_read|max_memory_usage/);
    expect(await limit('SELECT groupArray(x) FROM (SELECT arrayJoin(range(100000000)) AS x FROM messages)')).toMatch(/max_memory_usage|max_execution_time/);
  });

  test('a failed query of one organization leaves nothing for the next query of another (chdb hands a failed statement\'s output to its session\'s next one)', async () => {
    const small = new AnalyticsSql(engine.ch, { ...DEFAULT_ANALYTICS_CEILINGS, maxResultRows: 2 });
    await expect(small.run('SELECT text FROM messages', 'JSON', B)).rejects.toMatchObject({ code: 'ANALYTICS_LIMIT_EXCEEDED' });
    const next = (await small.run('SELECT 1 AS one', 'CSV', A)).body.toString('utf8');
    expect(next).toBe('1\n');
    expect((await small.run('SELECT count() AS n FROM messages', 'CSV', A)).body.toString('utf8')).toBe('3\n');
  });

  test('the embedded ClickHouse of another process (one shared session) is refused with a 503, nothing run', async () => {
    const remote = new AnalyticsSql({ ...engine.ch, kind: 'embedded', isolatedSession: undefined } as unknown as typeof engine.ch);
    await expect(remote.run('SELECT 1', 'JSON', A)).rejects.toMatchObject({ code: 'ENGINE_UNAVAILABLE', status: 503 });
  });

  test('outputs: JSON, CSV, JSONEachRow and Parquet', async () => {
    const json = JSON.parse((await sql.run('SELECT count() AS n FROM messages', 'JSON', A)).body.toString('utf8')) as { data: unknown[] };
    expect(json.data).toEqual([{ n: '3' }]);
    expect((await sql.run("SELECT 'a' AS x, 1 AS y", 'CSV', A)).body.toString('utf8')).toBe('"a",1\n');
    expect((await sql.run('SELECT id FROM messages ORDER BY id', 'Parquet', A)).body.subarray(0, 4).toString('latin1')).toBe('PAR1');
  });
});
