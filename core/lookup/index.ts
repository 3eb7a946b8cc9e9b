// The number lookup's public surface: the lookup, its wire shape and service, the HLR port.
export * from './lookup';
export * from './hlr';
