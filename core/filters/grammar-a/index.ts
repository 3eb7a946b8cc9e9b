// Grammar A (spec 3 §2.1, §2.2, §4.1): the generic list filter of GET /sms and GET /lookup.
//   const query = parseUrl(req.query, { ignore: ['access_token'] });   // also handles `_q`
//   const { where, params, orderBy, limit, offset, group } = compile(query, SMS_FIELDS);
// See docs/grammar-a.md.
export { OPERATORS, isOperator } from './ast';
export type { AndGroup, Condition, Group, Node, Operator, Paging, Query, QueryOrigin, SortKey } from './ast';
export { LOOKUP_FIELDS, OPERATORS_BY_TYPE, SMS_FIELDS, findField, operatorApplies } from './catalogue';
export type { Catalogue, FieldDef, FieldType } from './catalogue';
export { compile } from './compile';
export type { CompileOptions, CompiledQuery } from './compile';
export { parseDateValue } from './dates';
export type { CompiledGroup } from './group';
export { DEFAULT_LIMIT, MAX_CONDITIONS, MAX_DEPTH, MAX_LIMIT, MAX_LIST_VALUES } from './limits';
export { parseJson } from './parse-json';
export type { JsonCondition, JsonQuery } from './parse-json';
export { parseUrl } from './parse-url';
export type { ParseUrlOptions, UrlQueryInput } from './parse-url';
export { toJson, toUrlParams } from './render';
