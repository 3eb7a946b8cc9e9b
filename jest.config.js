// Two projects: unit (pure code, no engine) and integration (one real stack per run,
// started by test/support/global-setup.ts and shared by every integration suite).
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] };

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
      // dist/: the compiled product (npm run build), never a test or a module the tests load.
      modulePathIgnorePatterns: ['<rootDir>/dist/'],
    },
    {
      displayName: 'integration',
      // test/browser: the console in headless Chromium, over the same stack.
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/browser/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
      modulePathIgnorePatterns: ['<rootDir>/dist/'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    // test/containers: the images of `npm run images` started with testcontainers. Only under
    // `npm run test:containers` (TEST_CONTAINERS=1, which also provides the podman socket).
    ...(process.env.TEST_CONTAINERS === '1' ? [{
      displayName: 'containers',
      testMatch: ['<rootDir>/test/containers/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
      modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.tools/'],
    }] : []),
  ],
  maxWorkers: 2,
  // Per-project testTimeout is ignored by jest 30; integration tests drive real engines.
  testTimeout: 60000,
};
