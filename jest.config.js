// Two projects: unit tests live beside the code and need nothing running; integration
// tests under test/ share one real test bed (etcd + kube-apiserver, Kafka, ClickHouse engine)
// started once per run by globalSetup. A missing component makes globalSetup throw, so
// integration tests fail rather than skip.
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
  // @kubernetes/client-node 2.x and a few of its dependencies ship only ES modules; Node 20 loads
  // them with require(esm), jest's module system does not, so they are compiled to CommonJS here.
  '^.+\\.m?js$': [
    '@swc/jest',
    { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } },
  ],
};
const transformIgnorePatterns = [
  '/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose|agent-base|socks-proxy-agent|jsep|@jsep-plugin|jsonpath-plus|rfc4648)/)',
];

module.exports = {
  projects: [
    {
      displayName: 'unit',
      transform,
      transformIgnorePatterns,
      testEnvironment: 'node',
      roots: [
        '<rootDir>/common/src',
        '<rootDir>/operator/src',
        '<rootDir>/operator/cli',
        '<rootDir>/consumer/src',
        '<rootDir>/bench',
        '<rootDir>/scripts',
        '<rootDir>/test/env',
      ],
      testMatch: ['**/*.test.ts'],
      // Jest's 5 s default is a wall-clock race on a loaded machine: a unit test that compresses
      // on libuv's threadpool (gzip, zstd) measured 0.9 s alone and timed out once at load 13.
      // A hung test still fails, a minute later.
      testTimeout: 60_000,
    },
    {
      displayName: 'integration',
      transform,
      transformIgnorePatterns,
      testEnvironment: 'node',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      // Unit tests of the harness itself live in test/env and belong to the unit project.
      testPathIgnorePatterns: ['/test/env/'],
      globalSetup: '<rootDir>/test/env/jest-global-setup.ts',
      globalTeardown: '<rootDir>/test/env/jest-global-teardown.ts',
      slowTestThreshold: 60,
      setupFilesAfterEnv: ['<rootDir>/test/env/jest-timeout.ts'],
    },
  ],
};
