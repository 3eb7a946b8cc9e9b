// The accounts module's public surface: organizations, projects, tokens, prices and balances
// (types), the ports adapters implement, secrets, rate grants and the admin bodies. Adapters
// import from here; modules of core/ import the file they need.
export * from './types';
export * from './ports';
export * from './secrets';
export * from './rate-grants';
export * from './admin-body';
