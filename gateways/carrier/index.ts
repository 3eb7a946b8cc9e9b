// The carrier adapters' public entry: the connector (our SMPP client to upstream SMSCs) and
// the simulator (an SMSC for development and test stacks), both on the SMPP package in
// gateways/smpp/protocol; plus the connector's pure rules, which docs/carrier.md tabulates.
export { CONNECTOR_CONSUMER, startCarrierConnector, type CarrierConnector, type ConnectorOptions } from './connector';
export type { CarrierIdEntry } from './events';
export { carrierIdKey, inboundId, normalizeAddress, pickRoute, submitPdus } from './rules';
export { SIMULATOR_MO_SUBJECT, startCarrierSimulator, type CarrierSimulator, type MoReply, type MoRequest, type SimulatorOptions } from './simulator';
