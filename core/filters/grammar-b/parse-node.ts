// The filter tree (spec 3 §2.3 node types) from JSON whose shape ajv has already checked:
// operators, keys and the rules 1–4 of §2.4. Errors name the node path and the rule.
import { BASE_OPERATORS, NEGATABLE, type BaseOperator, type Condition, type EventNode, type Join, type Node, type Values } from './ast';
import { NATIVE_ATTRIBUTES, NATIVE_EVENT_ATTRIBUTES, OPERATOR_TYPES, type FieldType } from './fields';
import { BUCKET_MAX, CUSTOM_NAME, MAX_NESTING, MAX_NODES } from './limits';
import { parseValues } from './parse-values';
import { child, invalid, item, quote } from './problems';

type JsonNode = Record<string, unknown>;

interface Budget { nodes: number }

function splitOperator(operator: unknown, path: string): { base: BaseOperator; negate: boolean; operator: string } {
  const at = child(path, 'operator');
  if (typeof operator !== 'string') throw invalid(at, 'is required');
  const negate = operator.endsWith('-not');
  const base = (negate ? operator.slice(0, -4) : operator) as BaseOperator;
  if (!BASE_OPERATORS.includes(base) || (negate && !NEGATABLE.has(base))) throw invalid(at, `unknown operator ${quote(operator)} (spec 3 §2.4)`);
  return { base, negate, operator };
}

function join(raw: JsonNode): Join {
  return raw['join'] === 'or' ? 'or' : 'and';
}

function children(raw: JsonNode): unknown[] {
  const list = raw['children'];
  return Array.isArray(list) ? list : [];
}

function only(raw: JsonNode, path: string, allowed: readonly string[]): void {
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k)) throw invalid(child(path, k), `a ${String(raw['type'])} node takes only ${allowed.join(', ')}`);
  }
}

function fieldType(key: string, event: boolean): { type: FieldType; dayversary: boolean } {
  const native = (event ? NATIVE_EVENT_ATTRIBUTES : NATIVE_ATTRIBUTES)[key];
  return native ? { type: native.type, dayversary: native.dayversary === true } : { type: 'custom', dayversary: false };
}

function condition(raw: JsonNode, path: string, event: boolean): Condition & { key: string } {
  only(raw, path, ['type', 'key', 'operator', 'values']);
  const { base, negate, operator } = splitOperator(raw['operator'], path);
  // match-all and match-none look at no attribute: their key may be omitted.
  if ((base === 'match-all' || base === 'match-none') && raw['key'] === undefined) return { key: '', base, negate, operator, values: { shape: 'none' } };
  const key = raw['key'];
  const keyPath = child(path, 'key');
  if (typeof key !== 'string' || key.length === 0) throw invalid(keyPath, 'is required');
  if (base === 'in-segment') throw invalid(child(path, 'operator'), `${operator} is only for segment_condition (spec 3 §2.4 rule 4)`);
  const natives = event ? NATIVE_EVENT_ATTRIBUTES : NATIVE_ATTRIBUTES;
  if (!(key in natives) && !CUSTOM_NAME.test(key)) {
    throw invalid(keyPath, `${quote(key)} is neither a native ${event ? 'event attribute' : 'attribute'} nor a valid ${event ? 'parameter' : 'custom attribute'} name (letter, then letters, digits or _; at most 64)`);
  }
  const { type, dayversary } = fieldType(key, event);
  if (base === 'range-date-dayversary' && !(event && dayversary)) throw invalid(child(path, 'operator'), 'range-date-dayversary applies only to an event_condition on created-at (spec 3 §2.4 rule 4)');
  const types = OPERATOR_TYPES[base] ?? [];
  if (!types.includes(type)) {
    const why = base === 'range-date-anniversary' ? ' (only _date_birthday supports anniversaries)' : '';
    throw invalid(child(path, 'operator'), `${operator} does not apply to ${quote(key)}, a ${type === 'strings' ? 'list of strings' : type} attribute${why}`);
  }
  const values = parseValues(base, operator, raw['values'], path);
  if (!event && key === '_bucket') {
    const list = raw['values'];
    bucketNumbers(values, child(path, 'values'), Array.isArray(list) && (list[0] === '&&' || list[0] === '||') ? 1 : 0);
  }
  return { key, base, negate, operator, values };
}

/** `_bucket` is a number 0 to 199 (spec 3 §2.3, §8): a value or bound outside can only be a mistake. */
function bucketNumbers(values: Values, path: string, lead: number): void {
  const ok = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= BUCKET_MAX;
  const rule = `bucket numbers are integers 0 to ${BUCKET_MAX} (spec 3 §8)`;
  if (values.shape === 'numbers') {
    values.values.forEach((n, i) => { if (!ok(n)) throw invalid(item(path, i + lead), `${rule}, got ${n}`); });
  }
  if (values.shape === 'number-range') {
    if (values.lower !== null && !ok(values.lower)) throw invalid(child(path, 'lowerNumber'), `${rule}, got ${values.lower}`);
    if (values.upper !== null && !ok(values.upper)) throw invalid(child(path, 'upperNumber'), `${rule}, got ${values.upper}`);
  }
}

function eventNode(raw: unknown, path: string, depth: number, budget: Budget): EventNode {
  const node = count(raw, path, depth, budget);
  if (node['type'] === 'event_condition') return { kind: 'event', path, ...condition(node, path, true) };
  if (node['type'] === 'group') {
    only(node, path, ['type', 'join', 'children']);
    return { kind: 'event-subgroup', path, join: join(node), children: children(node).map((c, i) => eventNode(c, item(child(path, 'children'), i), depth + 1, budget)) };
  }
  throw invalid(child(path, 'type'), `a group_event holds only event_condition and group nodes, not ${quote(node['type'])}`);
}

function count(raw: unknown, path: string, depth: number, budget: Budget): JsonNode {
  budget.nodes += 1;
  if (budget.nodes > MAX_NODES) throw invalid(path, `a filter has at most ${MAX_NODES} nodes`);
  if (depth > MAX_NESTING) throw invalid(path, `nodes nest at most ${MAX_NESTING} deep`);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(path, 'must be a node object');
  return raw as JsonNode;
}

function node(raw: unknown, path: string, depth: number, budget: Budget): Node {
  const n = count(raw, path, depth, budget);
  switch (n['type']) {
    case 'group':
      only(n, path, ['type', 'join', 'children']);
      return { kind: 'group', path, join: join(n), children: children(n).map((c, i) => node(c, item(child(path, 'children'), i), depth + 1, budget)) };
    case 'attribute_condition':
      return { kind: 'attribute', path, ...condition(n, path, false) };
    case 'group_event': {
      only(n, path, ['type', 'event', 'datasource', 'join', 'children']);
      if (typeof n['event'] !== 'string' || n['event'].length === 0) throw invalid(child(path, 'event'), 'a group_event needs the event type');
      const datasources = Array.isArray(n['datasource']) ? (n['datasource'] as string[]) : [];
      const kids = children(n).map((c, i) => eventNode(c, item(child(path, 'children'), i), depth + 1, budget));
      return { kind: 'event-group', path, event: n['event'], datasources, join: join(n), children: kids };
    }
    case 'segment_condition': {
      only(n, path, ['type', 'key', 'operator', 'values']);
      const { base, negate, operator } = splitOperator(n['operator'], path);
      if (base !== 'in-segment') throw invalid(child(path, 'operator'), `a segment_condition takes in-segment or in-segment-not, not ${quote(operator)} (spec 3 §2.4 rule 4)`);
      if (typeof n['key'] !== 'string' || n['key'].length === 0) throw invalid(child(path, 'key'), 'the segment slug is required');
      return { kind: 'segment', path, key: n['key'], negate };
    }
    case 'event_condition':
      throw invalid(child(path, 'type'), 'an event_condition lives inside a group_event (spec 3 §2.3)');
    default:
      throw invalid(child(path, 'type'), `unknown node type ${quote(n['type'])}`);
  }
}

/** A filter tree whose shape ajv has checked; `path` names its root in messages. */
export function parseNode(raw: unknown, path = 'root'): Node {
  return node(raw, path, 1, { nodes: 0 });
}
