// The carrier contract's wire types live with the bus contract (core/bus/carrier.ts).
export * from '../bus/carrier';
