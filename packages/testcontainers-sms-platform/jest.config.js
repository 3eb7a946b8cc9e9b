// The module's own test: starts the product image with podman (or Docker) through testcontainers.
module.exports = {
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testEnvironment: 'node',
  testTimeout: 300000,
};
