/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleNameMapper: { '^@app/([^/]+)(.*)$': '<rootDir>/libs/$1/src$2' },
  setupFilesAfterEnv: ['<rootDir>/test/utils/openapi-traffic-setup.ts'],
  testTimeout: 60000,
  // the fault suite's totals (test/fault/tally.ts) after the usual report
  reporters: ['default', '<rootDir>/test/fault/tally-reporter.js'],
};
