// The workflow bundle entry: every workflow the worker registers.
export { systemProbe } from './system-probe';
export { smsLifecycle, smsScheduled } from './sms-lifecycle';
export { dlrDelivery } from './dlr-delivery';
export { smsBatchLifecycle } from './sms-batch-lifecycle';
