// DESIGN §4 "Analysts": the checker of analysts' queries over the tree ClickHouse's parser
// prints (EXPLAIN AST). The dumps below are ClickHouse 26.7's own output for the queries named;
// the end-to-end cases against the engine are in test/integration/analytics-sql.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkQueryAst, cteNamesOfQueryTree, deniedFunction, parseAstDump, QueryRefusal, RELATIONS } from '../../core/analytics';

const dump = (lines: string[]): string => `${lines.join('\n')}\n`;
const check = (lines: string[], ctes: string[] = []): ReadonlySet<string> => checkQueryAst(parseAstDump(dump(lines)), ctes).relations;
const refused = (lines: string[], ctes: string[] = []): string => {
  try {
    check(lines, ctes);
  } catch (err) {
    expect(err).toBeInstanceOf(QueryRefusal);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

const select = (tables: string[]): string[] => [
  'SelectWithUnionQuery (children 1)',
  ' ExpressionList (children 1)',
  '  SelectQuery (children 2)',
  '   ExpressionList (children 1)',
  '    Function count (alias n) (children 1)',
  '     ExpressionList',
  `   TablesInSelectQuery (children ${tables.length})`,
  ...tables.flatMap((t) => ['    TablesInSelectQueryElement (children 1)', '     TableExpression (children 1)', `      ${t}`]),
];

describe('parseAstDump', () => {
  test('builds the tree with names, aliases and counted children', () => {
    const root = parseAstDump(dump(select(['TableIdentifier messages (alias m)'])));
    expect(root.type).toBe('SelectWithUnionQuery');
    const fn = root.children[0]?.children[0]?.children[0]?.children[0];
    expect(fn).toMatchObject({ type: 'Function', name: 'count', alias: 'n' });
    const table = root.children[0]?.children[0]?.children[1]?.children[0]?.children[0]?.children[0];
    expect(table).toMatchObject({ type: 'TableIdentifier', name: 'messages', alias: 'm' });
  });

  test('a line break inside a name (an injected line) breaks the children counts and is refused', () => {
    // SELECT * FROM `messages\n      TableIdentifier messages`: ClickHouse prints the name's line break as is.
    const lines = select(['TableIdentifier messages', '      TableIdentifier messages']);
    lines[6] = '   TablesInSelectQuery (children 1)';
    expect(() => parseAstDump(dump(lines))).toThrow(/could not be checked/);
    expect(() => parseAstDump(dump(['SelectWithUnionQuery (children 1)', ' Identifier we', 'ird']))).toThrow(QueryRefusal);
    expect(() => parseAstDump('')).toThrow(/empty/);
  });
});

describe('checkQueryAst (docs/analytics.md "What a query may do")', () => {
  test('documented relations, unqualified, are read', () => {
    expect([...check(select(['TableIdentifier messages', 'TableIdentifier dlrs']))]).toEqual(['messages', 'dlrs']);
  });

  test.each([
    ['a qualified base table', 'TableIdentifier sms_platform.sms_messages', /unknown relation/],
    ['an unqualified base table', 'TableIdentifier sms_messages', /unknown relation/],
    ['a relation qualified', 'TableIdentifier analytics.messages', /unknown relation/],
    ['system tables', 'TableIdentifier system.tables', /system tables/],
    ['a table function', 'Function numbers (children 1)\n       ExpressionList (children 1)\n        Literal UInt64_1000000000000', /table functions/],
  ])('%s is refused', (_name, table, why) => {
    expect(refused(dump(select([table])).trimEnd().split('\n'))).toMatch(why);
  });

  test('statements other than SELECT, and FORMAT / INTO OUTFILE / SETTINGS at the top', () => {
    expect(refused(['InsertQuery   (children 2)', ' Identifier t', ' Identifier m'])).toMatch(/only a SELECT/);
    expect(refused(['Explain EXPLAIN (children 1)', ' SelectWithUnionQuery'])).toMatch(/only a SELECT/);
    expect(refused(['SelectWithUnionQuery (children 3)', ' ExpressionList (children 1)', '  SelectQuery (children 1)', '   ExpressionList (children 1)', '    Literal UInt64_1', " Literal 'x'", ' Identifier JSON'])).toMatch(/INTO OUTFILE/);
  });

  test('SETTINGS anywhere (a Set node) and query parameters are refused', () => {
    const inner = ['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 2)', '   ExpressionList (children 1)', '    Literal UInt64_1', '   Set'];
    expect(refused(inner)).toMatch(/SETTINGS/);
    expect(refused(['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 1)', '   ExpressionList (children 1)', '    QueryParameter org:String'])).toMatch(/parameters/);
  });

  test('unknown node types are refused by name', () => {
    expect(refused(['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 1)', '   ExpressionList (children 1)', '    SomethingNew'])).toMatch(/SomethingNew is not allowed/);
  });

  test('functions that read outside, in any case; IN with a table name on its right', () => {
    const withFn = (name: string): string[] => ['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 1)', '   ExpressionList (children 1)', `    Function ${name} (children 1)`, '     ExpressionList (children 1)', "      Literal 'x'"];
    for (const name of ['dictGet', 'dictGetString', 'DICTHAS', 'getSetting', 'joinGet', 'file', 'hasColumnInTable', 'sleep', 'getServerSetting', 'filesystemAvailable', '__getScalar', 'hostName', 'currentUser']) {
      expect({ name, why: refused(withFn(name)) }).toEqual({ name, why: expect.stringMatching(/not allowed/) });
    }
    expect(check(withFn('toStartOfDay')).size).toBe(0);
    expect(deniedFunction('quantile')).toBe(false);
    expect(refused(['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 1)', '   ExpressionList (children 1)', '    Function in (children 1)', '     ExpressionList (children 2)', '      Identifier x', '      Identifier sms_platform.sms_messages'])).toMatch(/reads a table/);
  });

  test('WITH subqueries: named by EXPLAIN QUERY TREE, as many as WithElement nodes, plain and not a relation name', () => {
    const withCte = ['SelectWithUnionQuery (children 1)', ' ExpressionList (children 1)', '  SelectQuery (children 3)', '   ExpressionList (children 1)', '    WithElement (children 1)', '     Subquery (children 1)',
      '      SelectWithUnionQuery (children 1)', '       ExpressionList (children 1)', '        SelectQuery (children 2)', '         ExpressionList (children 1)', '          Asterisk',
      '         TablesInSelectQuery (children 1)', '          TablesInSelectQueryElement (children 1)', '           TableExpression (children 1)', '            TableIdentifier messages',
      '   ExpressionList (children 1)', '    Asterisk', '   TablesInSelectQuery (children 1)', '    TablesInSelectQueryElement (children 1)', '     TableExpression (children 1)', '      TableIdentifier d'];
    expect([...check(withCte, ['d'])]).toEqual(['messages']);
    expect(refused(withCte, [])).toMatch(/WITH clauses do not match/);
    expect(refused(withCte, ['e'])).toMatch(/unknown relation "d"/);
    expect(refused(withCte, ['messages'])).toMatch(/may not take the name/);
    expect(refused(withCte, ['d x'])).toMatch(/plain identifier/);
  });

  test('cteNamesOfQueryTree reads cte_name of CTE query nodes only', () => {
    const tree = ['QUERY id: 0', '  WITH', '    LIST id: 1, nodes: 2', '      QUERY id: 2, alias: s, is_subquery: 1', '      QUERY id: 8, is_subquery: 1, is_cte: 1, cte_name: x'].join('\n');
    expect(cteNamesOfQueryTree(tree)).toEqual(['x']);
  });
});

describe('docs/analytics.md documents every relation and column with its type', () => {
  const page = readFileSync(join(__dirname, '../../docs/analytics.md'), 'utf8');
  test.each(RELATIONS.map((r) => [r.name, r] as const))('%s', (_name, relation) => {
    expect(page).toContain(`### \`${relation.name}\``);
    for (const c of relation.columns) expect({ column: c.name, row: page.includes(`| \`${c.name}\` | \`${c.type}\` |`) }).toEqual({ column: c.name, row: true });
  });
});
