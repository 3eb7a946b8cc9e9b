// Spec 3 §4.1 rules 1–5 and §2.1 as compiled SQL: tree shape, sort, paging, grouping, and
// the catalogues of GET /sms and GET /lookup.
import {
  compile, LOOKUP_FIELDS, parseJson, parseUrl, SMS_FIELDS, type Catalogue, type Query,
} from '../../core/filters/grammar-a';

const now = new Date('2026-11-22T12:00:00.000Z');
const url = (text: string): Query => parseUrl(new URLSearchParams(text));

describe('spec 3 §4.1 rules 1–2: the WHERE tree', () => {
  test('no filter → 1', () => {
    expect(compile(url(''), SMS_FIELDS, { now }).where).toBe('1');
  });

  test('AND at the root is bare, repeated keys are a parenthesised OR, params numbered in order', () => {
    const c = compile(url('status_eq=sent&charsCount_gt=5&status_eq=failed'), SMS_FIELDS, { now });
    expect(c.where).toBe('(status = {p0:String} OR status = {p1:String}) AND chars_count > {p2:Float64}');
    expect(c.params).toEqual({ p0: 'sent', p1: 'failed', p2: 5 });
  });

  test('JSON nesting: or inside and, one-child groups collapse, empty and → 1, empty or → 0', () => {
    const q = parseJson({
      filter: [
        { field: 'status', operator: 'eq', value: 'sent' },
        {
          field: '',
          operator: 'or',
          value: [
            { field: '', operator: 'and', value: [{ field: 'to', operator: 'starts', value: '44' }, { field: 'country', operator: 'eq', value: 'GB' }] },
            { field: '', operator: 'and', value: [{ field: 'charsCount', operator: 'gt', value: 100 }] },
          ],
        },
        { field: '', operator: 'and', value: [] },
        { field: '', operator: 'or', value: [] },
      ],
    });
    const c = compile(q, SMS_FIELDS, { now });
    expect(c.where).toBe(
      'status = {p0:String} AND ((startsWith(recipient, {p1:String}) AND country = {p2:String}) OR chars_count > {p3:Float64}) AND 1 AND 0',
    );
    expect(c.params).toEqual({ p0: 'sent', p1: '44', p2: 'GB', p3: 100 });
  });

  test('nested fields compile against a catalogue that has them', () => {
    const catalogue: Catalogue = [
      { name: 'id', type: 'id', column: 'id' },
      { name: 'meta.source', type: 'string', column: "JSONExtractString(meta, 'source')" },
    ];
    const c = compile(url('meta*source_eq=api'), catalogue, { now });
    expect(c.where).toBe("(JSONExtractString(meta, 'source')) = {p0:String}");
    expect(c.orderBy).toBe('id DESC');
  });
});

describe('spec 3 §4.1 rule 3: ORDER BY', () => {
  test.each([
    ['', 'created_at DESC, id DESC'],
    ['_sort=createdAt:-,status:+,to', 'created_at DESC, status ASC, recipient ASC, id DESC'],
    ['_sort=status', 'status ASC, id DESC'],
    ['_sort=id:%2B', 'id ASC'],
    ['_sort=id:-,status', 'id DESC, status ASC'],
    ['_sort=pricePerSms:-', '(price_per_sms_micros / 1000000) DESC, id DESC'],
  ])('%j → %s', (text, orderBy) => {
    expect(compile(url(text), SMS_FIELDS, { now }).orderBy).toBe(orderBy);
  });

  test('JSON sort is the same', () => {
    const q = parseJson({ sort: [['createdAt', 'desc'], ['status', 'asc'], ['to', 'asc']] });
    expect(compile(q, SMS_FIELDS).orderBy).toBe('created_at DESC, status ASC, recipient ASC, id DESC');
  });
});

describe('spec 3 §4.1 rule 4: LIMIT / OFFSET', () => {
  test('default 50 from 0', () => {
    const c = compile(url(''), SMS_FIELDS);
    expect([c.limit, c.offset]).toEqual([50, 0]);
  });
  test('_start/_limit', () => {
    const c = compile(url('_start=200&_limit=1000'), SMS_FIELDS);
    expect([c.limit, c.offset]).toEqual([1000, 200]);
  });
  test('JSON paging', () => {
    const c = compile(parseJson({ paging: { start: 3, limit: 7 } }), SMS_FIELDS);
    expect([c.limit, c.offset]).toEqual([7, 3]);
  });
  test('defaultLimit and maxLimit options', () => {
    expect(compile(url(''), SMS_FIELDS, { defaultLimit: 20 }).limit).toBe(20);
    expect(compile(url('_start=0&_limit=5000'), SMS_FIELDS, { maxLimit: 5000 }).limit).toBe(5000);
  });
});

describe('spec 3 §4.1 rule 5: _group', () => {
  test.each([
    ['hourly', { expression: 'toStartOfHour(created_at)', kind: 'time' }],
    ['daily', { expression: 'toStartOfDay(created_at)', kind: 'time' }],
    ['monthly', { expression: 'toStartOfMonth(created_at)', kind: 'time' }],
    ['status', { expression: 'status', kind: 'field' }],
    ['clientId', { expression: 'client_id', kind: 'field' }],
    ['priceUser', { expression: '(price_user_micros / 1000000)', kind: 'field' }],
  ])('_group=%s', (g, expected) => {
    expect(compile(url(`_group=${g}`), SMS_FIELDS).group).toEqual(expected);
  });
  test('no _group → no group', () => {
    expect(compile(url(''), SMS_FIELDS)).not.toHaveProperty('group');
  });
  test('JSON group', () => {
    expect(compile(parseJson({ group: 'monthly' }), LOOKUP_FIELDS).group).toEqual({ expression: 'toStartOfMonth(created_at)', kind: 'time' });
  });
});

describe('spec 3 §1: the catalogues of GET /sms and GET /lookup', () => {
  const names = (c: Catalogue): string[] => c.map((f) => f.name);
  test('SMS API names', () => {
    expect(names(SMS_FIELDS)).toEqual([
      'id', 'clientId', 'status', 'statusCode', 'from', 'country', 'to', 'normalizedTo', 'charsCount', 'text', 'deliveredText',
      'messagesCount', 'encoding', 'unicode', 'allowUnicode', 'charged', 'pricePerSms', 'priceUser', 'currency', 'createdAt',
      'chargedAt', 'scheduledAt', 'sentAt', 'deliveredAt', 'direction',
    ]);
  });
  test('lookup API names', () => {
    expect(names(LOOKUP_FIELDS)).toEqual([
      'id', 'status', 'statusCode', 'country', 'to', 'normalizedTo', 'subscriberStatus', 'imsi', 'servingMsc', 'ported', 'roaming',
      'network', 'charged', 'pricePerSms', 'createdAt', 'deliveredAt',
    ]);
  });
  test('nullable exactly where the ClickHouse column is Nullable', () => {
    const nullable = (c: Catalogue): string[] => c.filter((f) => f.nullable === true).map((f) => f.column);
    expect(nullable(SMS_FIELDS)).toEqual(['client_id', 'status_code', 'charged_at', 'scheduled_at', 'sent_at', 'delivered_at']);
    expect(nullable(LOOKUP_FIELDS)).toEqual(['status_code', 'subscriber_status', 'imsi', 'serving_msc', 'delivered_at']);
  });
  test.each([
    ['from_eq=Acme', 'sender = {p0:String}'],
    ['to_starts=44', 'startsWith(recipient, {p0:String})'],
    ['priceUser_lt=1', '(price_user_micros / 1000000) < {p0:Float64}'],
    ['allowUnicode_eq=false', 'allow_unicode = {p0:Bool}'],
    ['scheduledAt_exists=true', 'isNotNull(scheduled_at)'],
  ])('SMS %s', (text, where) => {
    expect(compile(url(text), SMS_FIELDS, { now }).where).toBe(where);
  });
  test.each([
    ['servingMsc_exists=false', "(isNull(serving_msc) OR serving_msc = '')"],
    ['ported_eq=true', 'ported = {p0:Bool}'],
    ['pricePerSms_gte=0.01', '(price_micros / 1000000) >= {p0:Float64}'],
    ['subscriberStatus_nei=ACTIVE', '(isNull(subscriber_status) OR NOT (lowerUTF8(subscriber_status) = lowerUTF8({p0:String})))'],
    ['network_containsi=voda', 'position(lowerUTF8(network), lowerUTF8({p0:String})) > 0'],
  ])('lookup %s', (text, where) => {
    expect(compile(url(text), LOOKUP_FIELDS, { now }).where).toBe(where);
  });
});

describe('spec 3 §1: both forms bind the same number', () => {
  test('-0 binds as 0 (the URL form cannot tell them apart)', () => {
    const fromJson = compile(parseJson({ filter: [{ field: 'charsCount', operator: 'eq', value: -0 }] }), SMS_FIELDS).params['p0'];
    const fromUrl = compile(url('charsCount_eq=-0'), SMS_FIELDS).params['p0'];
    expect(Object.is(fromJson, 0)).toBe(true);
    expect(Object.is(fromUrl, 0)).toBe(true);
  });
});

describe('relative dates use the injected now', () => {
  test('same query, two nows, two parameters', () => {
    const q = url('createdAt_gte=1 day ago');
    expect(compile(q, SMS_FIELDS, { now }).params).toEqual({ p0: '2026-11-21 12:00:00.000000' });
    expect(compile(q, SMS_FIELDS, { now: new Date('2020-01-01T00:00:00Z') }).params).toEqual({ p0: '2019-12-31 00:00:00.000000' });
  });
});
