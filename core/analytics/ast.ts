// The checker of an analyst's query (docs/analytics.md "What a query may do"). It reads the
// tree ClickHouse's own parser built (`EXPLAIN AST` of the query, stores/analytics-sql.ts),
// never the query text: every node type must be one a plain SELECT is made of, every table
// a query reads must be one of the documented relations (unqualified) or a CTE of the query
// itself, no table function, no SETTINGS, FORMAT, INTO OUTFILE or query parameter, and no
// function that reads outside the query's relations (dictionaries, settings, files, other
// tables by name, the server). Anything it does not recognise is refused.
import { RELATION_NAMES } from './relations';

export interface AstNode {
  readonly type: string;
  /** What follows the type on its line: an identifier's or function's name, a literal. */
  readonly name: string;
  readonly alias: string | undefined;
  readonly children: AstNode[];
}

/** Why a query is refused: one sentence, shown in the 400's detail. */
export class QueryRefusal extends Error {
  override readonly name = 'QueryRefusal';
}

/** One line of the dump: indentation, node type, the rest (name, ` (alias x)`, ` (children N)`). */
function parseLine(line: string): { depth: number; type: string; name: string; alias: string | undefined; children: number } | null {
  const head = /^( *)([A-Za-z][A-Za-z0-9_:]*)(?: (.*))?$/.exec(line);
  if (!head) return null;
  let rest = head[3] ?? '';
  let children = 0;
  const counted = /^(.*?) ?\(children (\d+)\)$/.exec(rest);
  if (counted) {
    rest = counted[1] as string;
    children = Number(counted[2]);
  }
  let alias: string | undefined;
  const aliased = /^(.*?) ?\(alias (.*)\)$/.exec(rest);
  if (aliased) {
    rest = aliased[1] as string;
    alias = aliased[2] as string;
  }
  return { depth: (head[1] as string).length, type: head[2] as string, name: rest, alias, children };
}

/**
 * Parses the text of `EXPLAIN AST` (one node per line, indented by depth, `(children N)` when
 * it has any) into a tree. Every node's children are counted against its `(children N)`: a
 * name holding a line break (a quoted identifier can) makes a line no node owns, and the dump
 * is refused rather than guessed.
 */
export function parseAstDump(text: string): AstNode {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new QueryRefusal('the query is empty');
  const stack: Array<{ node: AstNode; depth: number; expected: number }> = [];
  let root: AstNode | undefined;
  const close = (depth: number): void => {
    while (stack.length > 0 && (stack[stack.length - 1] as { depth: number }).depth >= depth) {
      const top = stack.pop() as { node: AstNode; expected: number };
      if (top.node.children.length !== top.expected) throw new QueryRefusal('the query could not be checked (its parse tree is ambiguous: a name with a line break?)');
    }
  };
  for (const line of lines) {
    const parsed = parseLine(line);
    if (!parsed) throw new QueryRefusal('the query could not be checked (its parse tree is ambiguous: a name with a line break?)');
    const { depth, children: expected } = parsed;
    const node: AstNode = { type: parsed.type, name: parsed.name, alias: parsed.alias, children: [] };
    close(depth);
    if (stack.length === 0) {
      if (root !== undefined || depth !== 0) throw new QueryRefusal('the query could not be checked (its parse tree is ambiguous: a name with a line break?)');
      root = node;
    } else {
      const parent = stack[stack.length - 1] as { node: AstNode; depth: number };
      if (depth !== parent.depth + 1) throw new QueryRefusal('the query could not be checked (its parse tree is ambiguous: a name with a line break?)');
      parent.node.children.push(node);
    }
    stack.push({ node, depth, expected });
  }
  close(0);
  return root as AstNode;
}

/** The node types a SELECT over relations is made of; any other (Set, QueryParameter, InsertQuery, ...) is refused. */
const ALLOWED_NODES = new Set([
  'SelectWithUnionQuery', 'SelectIntersectExceptQuery', 'SelectQuery', 'ExpressionList', 'Identifier', 'TableIdentifier',
  'Function', 'Literal', 'Asterisk', 'QualifiedAsterisk', 'ColumnsRegexpMatcher', 'ColumnsListMatcher',
  'QualifiedColumnsRegexpMatcher', 'QualifiedColumnsListMatcher', 'ColumnsTransformerList', 'ColumnsApplyTransformer',
  'ColumnsExceptTransformer', 'ColumnsReplaceTransformer', 'ColumnsReplaceTransformer::Replacement',
  'TablesInSelectQuery', 'TablesInSelectQueryElement', 'TableExpression', 'TableJoin', 'ArrayJoin', 'Subquery',
  'WithElement', 'WindowDefinition', 'WindowListElement', 'OrderByElement', 'InterpolateElement', 'SampleRatio',
]);

/** Why a node type is refused, for the ones a hostile query reaches for. */
const NODE_REASONS: Readonly<Record<string, string>> = {
  Set: 'a SETTINGS clause is not allowed (the ceilings of every analytics query are fixed)',
  QueryParameter: 'query parameters ({name:Type}) are not allowed',
};

/**
 * Functions (lower-cased) that read outside the query's relations or the server's state:
 * dictionaries, Join tables and columns of other tables by name, files and models, settings,
 * macros and server introspection, sleeping, writing to the server log. Names starting with a
 * listed prefix are refused too (every `dictGet*`, `filesystem*`, `addressTo*`).
 */
const DENIED_FUNCTIONS = new Set([
  'joinget', 'joingetornull', 'hascolumnintable', 'getmaxtablenamelengthfordatabase', 'file', 'catboostevaluate', 'modelevaluate',
  'naivebayesclassifier', 'evalmlmethod', 'getsetting', 'getsettingordefault', 'getserversetting', 'getmergetreesetting',
  'getmacro', 'globalvariable', 'getclienthttpheader', 'hostname', 'fqdn', 'tcpport', 'getserverport', 'serveruuid', 'uptime',
  'getoskernelversion', 'buildid', 'displayname', 'zookeepersessionuptime', 'currentuser', 'user', 'currentprofiles',
  'enabledprofiles', 'defaultprofiles', 'currentroles', 'enabledroles', 'defaultroles', 'showcertificate', 'sleep',
  'sleepeachrow', 'demangle', 'trap', 'logtrace', 'generateserialid', 'initialqueryid', 'initialquerystarttime',
  'queryid', 'currentqueryid', 'dictionary',
]);
const DENIED_PREFIXES = ['dict', 'filesystem', 'addressto', '__'];

/** IN-family functions: an identifier on the right would be read as a table (`x IN db.table`). */
const IN_FUNCTIONS = new Set(['in', 'notin', 'globalin', 'globalnotin', 'nullin', 'notnullin', 'globalnullin', 'globalnotnullin']);

export function deniedFunction(name: string): boolean {
  const lower = name.toLowerCase();
  return DENIED_FUNCTIONS.has(lower) || DENIED_PREFIXES.some((p) => lower.startsWith(p));
}

export interface CheckedQuery {
  /** The documented relations the query reads. */
  readonly relations: ReadonlySet<string>;
}

const show = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * Checks a query's tree (`root`: its EXPLAIN AST) against the rules above. `cteNames` are the
 * names of the query's own `WITH name AS (SELECT ...)` (EXPLAIN QUERY TREE run_passes = 0 shows
 * them; EXPLAIN AST does not): there must be exactly as many as WithElement nodes, each a plain
 * identifier that is not a documented relation's name.
 */
export function checkQueryAst(root: AstNode, cteNames: readonly string[] = []): CheckedQuery {
  if (root.type !== 'SelectWithUnionQuery') throw new QueryRefusal(`only a SELECT (or WITH ... SELECT) is allowed, not ${root.type.replace(/Query$/, '')}`);
  if (root.children.length !== 1) throw new QueryRefusal('FORMAT, INTO OUTFILE and SETTINGS clauses are not allowed (the body\'s "format" chooses the output)');
  const withElements = count(root, (n) => n.type === 'WithElement');
  if (withElements !== cteNames.length) throw new QueryRefusal('the query could not be checked (its WITH clauses do not match)');
  const ctes = new Set<string>();
  for (const name of cteNames) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new QueryRefusal(`a WITH subquery must be named by a plain identifier, not ${show(name)}`);
    if (RELATION_NAMES.has(name)) throw new QueryRefusal(`a WITH subquery may not take the name of the relation "${name}"`);
    ctes.add(name);
  }
  const relations = new Set<string>();
  walk(root, null, ctes, relations);
  return { relations };
}

/** The WITH subqueries (`WITH name AS (SELECT ...)`) of a tree. */
export function withElements(root: AstNode): number {
  return count(root, (n) => n.type === 'WithElement');
}

function count(node: AstNode, test: (n: AstNode) => boolean): number {
  return (test(node) ? 1 : 0) + node.children.reduce((sum, child) => sum + count(child, test), 0);
}

function walk(node: AstNode, parent: AstNode | null, ctes: ReadonlySet<string>, relations: Set<string>): void {
  if (!ALLOWED_NODES.has(node.type)) {
    throw new QueryRefusal(NODE_REASONS[node.type] ?? `${node.type} is not allowed in an analytics query (only one SELECT over the documented relations)`);
  }
  if (node.type === 'TableIdentifier') {
    const name = node.name;
    if (name.startsWith('system.') || name === 'system') throw new QueryRefusal(`system tables are not readable (${show(name)}); the relations are ${[...RELATION_NAMES].join(', ')}`);
    if (!RELATION_NAMES.has(name) && !ctes.has(name)) {
      throw new QueryRefusal(`unknown relation ${show(name)}: a query reads only ${[...RELATION_NAMES].join(', ')} (unqualified) and its own WITH subqueries`);
    }
    if (RELATION_NAMES.has(name)) relations.add(name);
  }
  if (node.type === 'Function') {
    if (parent?.type === 'TableExpression') throw new QueryRefusal(`table functions are not allowed (${show(node.name)}): read the documented relations`);
    if (deniedFunction(node.name)) throw new QueryRefusal(`the function ${show(node.name)} is not allowed: it reads outside the query's relations`);
    if (IN_FUNCTIONS.has(node.name.toLowerCase())) {
      const right = node.children[0]?.children[1];
      if (right?.type === 'Identifier') throw new QueryRefusal(`"${node.name}" with a name on its right (${show(right.name)}) reads a table: use a subquery (x IN (SELECT ... FROM relation))`);
    }
  }
  for (const child of node.children) walk(child, node, ctes, relations);
}

/** The `cte_name:` of each CTE in the text of `EXPLAIN QUERY TREE run_passes = 0`. */
export function cteNamesOfQueryTree(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*QUERY id: \d+,.* is_cte: 1, cte_name: (.*)$/.exec(line);
    if (m) names.push(m[1] as string);
  }
  return names;
}
