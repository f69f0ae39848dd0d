/**
 * One jest run over every package: TypeScript through swc (type checking is `tsc -b`, its own
 * step). Test files that load llama.cpp run in a second jest process of their own
 * (MURMUR_JEST_ISOLATED=1): after the rest of the suite in the same worker, the native engine
 * failed to answer.
 */
const ISOLATED = ['/services/conversion/test/llama-engine\\.test\\.ts$'];
const isolatedRun = process.env.MURMUR_JEST_ISOLATED === '1';

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleNameMapper: {
    '^@murmur/kit$': '<rootDir>/services/kit/src/index.ts',
    '^@murmur/proto$': '<rootDir>/proto/src/index.ts',
    '^@murmur/(auth|billing|library|transcription|conversion)$': '<rootDir>/services/$1/src/index.ts',
    '^@murmur/gateway$': '<rootDir>/gateway/src/index.ts',
  },
  testMatch: ['<rootDir>/**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', ...(isolatedRun ? [] : ISOLATED)],
  ...(isolatedRun ? { testRegex: ISOLATED, testMatch: undefined } : {}),
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
