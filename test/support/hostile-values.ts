// Values that try to escape a bound parameter or break a query: quotes, comments, keywords,
// placeholder syntax, control and bidi characters, 10 kB strings. Grammar A must compile each
// into a bound parameter (unit tests) that ClickHouse compares literally (integration tests).
export const HOSTILE_VALUES: readonly string[] = [
  "' OR 1=1 --",
  "x'); DROP TABLE sms_messages; --",
  '"; DROP TABLE sms_messages; /*',
  '*/ OR 1 /*',
  '\\',
  "\\' OR \\'1\\'=\\'1",
  '{p0:String}',
  '{__org:String}',
  '}) OR 1=1 --',
  '1; SELECT * FROM system.users',
  'UNION SELECT id FROM system.tables',
  "O'Brien",
  '-- DROP',
  'ünïcödé 🎉 \u202e\u200b',
  '\u0000',
  'ünïcödé 🎉 \u202e\u0000\u200b',
  '\r\n\t',
  "'".repeat(10_240),
  'x'.repeat(10_240),
];
