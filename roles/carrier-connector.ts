// The carrier role: the carrier connector (gateways/carrier/connector.ts) run by main.ts with
// the configured CARRIER_ROUTES over this process's NATS. Behaviour: docs/carrier.md.
export { startCarrierConnector, type CarrierConnector, type ConnectorOptions } from '../gateways/carrier';
