// The simulator role: the carrier simulator (gateways/carrier/simulator.ts), started by main.ts
// only where a route named `simulator` points at it. Never enabled in production configs.
export { startCarrierSimulator, type CarrierSimulator, type SimulatorOptions } from '../gateways/carrier';
