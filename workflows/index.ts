// The workflow bundle entry: every workflow the worker registers.
export { systemProbe } from './system-probe';
