// The SMS module's public surface for adapters, services and activities: the message and its
// DLRs, the acceptance and lifecycle rules, the ports they take. Modules of core/ import the file
// they need; workflows import files too (the workflow bundle takes only what a workflow uses).
export * from './acceptance';
export * from './dlr';
export * from './encoding';
export * from './history-ports';
export * from './inbound';
export * from './lifecycle-ports';
export * from './lifecycle-rules';
export * from './message';
export * from './opt-out';
export * from './phone';
export * from './ports';
export * from './quote';
export * from './refund';
export * from './schedule';
export * from './stats';
export * from './webhook-signature';
export * from './webhook-target';
