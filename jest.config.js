/**
 * One jest run over every package: TypeScript through swc, with the transform `npm start` builds
 * with (scripts/swc-options.js); type checking is `tsc -b`, its own step.
 */
const { swcOptions } = require('./scripts/swc-options');

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', swcOptions()],
  },
  moduleNameMapper: {
    '^@murmur/contract$': '<rootDir>/services/contract/src/index.ts',
    '^@murmur/kit$': '<rootDir>/services/kit/src/index.ts',
    '^@murmur/kit/(tracing|testing)$': '<rootDir>/services/kit/src/$1.ts',
    '^@murmur/proto$': '<rootDir>/proto/src/index.ts',
    '^@murmur/(auth|billing|library|transcription|conversion)$': '<rootDir>/services/$1/src/index.ts',
    '^@murmur/gateway$': '<rootDir>/gateway/src/index.ts',
    '^@murmur/app$': '<rootDir>/app/src/index.ts',
    '^@murmur/sdk$': '<rootDir>/sdk/src/index.ts',
    '^@murmur/ai-sdk$': '<rootDir>/ai-sdk/src/index.ts',
    // The SDKs are ESM: its relative imports name the .js files tsc writes; tests read its .ts.
    '^(\\./(?:browser|client|errors|http|jobs|listen|live|node-client|node-upload|pagination|platform|uploads|webhooks|generated/openapi|transcription-model))\\.js$': '$1',
  },
  testMatch: ['<rootDir>/**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
  /**
   * Two worker processes on two cores: most files spend their time waiting on the servers they
   * start (gRPC, Postgres, ffmpeg, pocketsphinx, Chromium), so two files at once keep both cores
   * busy; one worker left the run at 1,656 s (CI rehearsal, 2026-11-28).
   */
  maxWorkers: 2,
  /**
   * Each worker is replaced whenever a test file leaves its heap above this.
   * In band, every file ran in the one process that ran the files before it, whose leftovers
   * (module graphs, servers' buffers, PGlite instances) made late files 2–3× slower than alone
   * (transcribe-route 96 s vs 40 s, the two-hour file 106 s vs 40 s). Recycled, the whole run
   * took 829 s instead of 1,140 s here (~50 s of that from killed-jobs' shorter audio).
   */
  workerIdleMemoryLimit: '300MB',
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
