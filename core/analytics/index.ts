export * from './ast';
export * from './limits';
export * from './relations';
