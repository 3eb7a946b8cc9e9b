// The parsed audience filter (spec 3 §2.3, §2.4): what the compiler and the segment resolver
// work on. Every node keeps the path it came from (`root.children[2]`) so that errors found
// after parsing (unknown segment depth, cycles) still name the node.

export type Join = 'and' | 'or';

/** Operators of spec 3 §2.4 without their `-not` suffix. */
export const BASE_OPERATORS = [
  'match-all', 'match-none', 'exists', 'matches-bool', 'contains', 'startswith', 'endswith', 'matches-string',
  'matches-number', 'range-number', 'matches-date', 'range-date', 'range-date-relative', 'range-date-anniversary',
  'range-date-dayversary', 'range-date-timeversary', 'geopoint-distance', 'in-segment',
] as const;
export type BaseOperator = (typeof BASE_OPERATORS)[number];

/** The operators that have a `-not` form in the table of §2.4 (and only those). */
export const NEGATABLE: ReadonlySet<BaseOperator> = new Set<BaseOperator>([
  'exists', 'contains', 'startswith', 'endswith', 'matches-string', 'matches-number', 'range-number', 'range-date',
  'range-date-relative', 'in-segment',
]);

export type Period = 'min' | 'hour' | 'day' | 'week' | 'month' | 'year';

export type Values =
  | { readonly shape: 'none' }
  | { readonly shape: 'bool'; readonly value: boolean }
  | { readonly shape: 'strings'; readonly all: boolean; readonly values: readonly string[] }
  | { readonly shape: 'numbers'; readonly all: boolean; readonly values: readonly number[] }
  | { readonly shape: 'number-range'; readonly lower: number | null; readonly upper: number | null; readonly lowerExclude: boolean; readonly upperExclude: boolean }
  | { readonly shape: 'day'; readonly date: string }
  | DateRange
  | RelativeRange
  | { readonly shape: 'anniversary-relative'; readonly lowerDays: number; readonly upperDays: number }
  | { readonly shape: 'anniversary-absolute'; readonly lower: number; readonly upper: number }
  | { readonly shape: 'dayversary'; readonly lower: number; readonly upper: number }
  | { readonly shape: 'timeversary-relative'; readonly lowerMinutes: number; readonly upperMinutes: number }
  | { readonly shape: 'timeversary-absolute'; readonly lower: number; readonly upper: number }
  | { readonly shape: 'geo'; readonly latitude: number; readonly longitude: number; readonly distanceKm: number };

export interface DateRange {
  readonly shape: 'date-range';
  /** ISO date or datetime text as sent; a date or a datetime without offset is project-local. */
  readonly lower: string | null;
  readonly upper: string | null;
  readonly lowerExclude: boolean;
  readonly upperExclude: boolean;
  readonly lowerRounding: boolean;
  readonly upperRounding: boolean;
}

export interface RelativeRange {
  readonly shape: 'relative-range';
  readonly lowerOffset: number | null;
  readonly upperOffset: number | null;
  readonly lowerPeriod: Period;
  readonly upperPeriod: Period;
  readonly lowerExclude: boolean;
  readonly upperExclude: boolean;
  readonly lowerRounding: boolean;
  readonly upperRounding: boolean;
}

export interface Condition {
  /** The operator as sent, for messages. */
  readonly operator: string;
  readonly base: BaseOperator;
  readonly negate: boolean;
  readonly values: Values;
}

export interface GroupNode {
  readonly kind: 'group';
  readonly path: string;
  readonly join: Join;
  readonly children: readonly Node[];
}

export interface AttributeCondition extends Condition {
  readonly kind: 'attribute';
  readonly path: string;
  readonly key: string;
}

export interface SegmentCondition {
  readonly kind: 'segment';
  readonly path: string;
  readonly key: string;
  readonly negate: boolean;
}

export interface EventGroup {
  readonly kind: 'event-group';
  readonly path: string;
  readonly event: string;
  readonly datasources: readonly string[];
  readonly join: Join;
  readonly children: readonly EventNode[];
}

export interface EventCondition extends Condition {
  readonly kind: 'event';
  readonly path: string;
  readonly key: string;
}

export interface EventSubGroup {
  readonly kind: 'event-subgroup';
  readonly path: string;
  readonly join: Join;
  readonly children: readonly EventNode[];
}

export type Node = GroupNode | AttributeCondition | SegmentCondition | EventGroup;
export type EventNode = EventCondition | EventSubGroup;
