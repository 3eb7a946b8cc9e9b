// The carrier contract's public surface: its wire types, receipts, the simulator's outcomes.
export * from './types';
export * from './receipt';
export * from './simulator-outcomes';
