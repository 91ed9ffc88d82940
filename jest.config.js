// jest for examples/testing/*.jest.test.ts: TypeScript stripped by Babel, kept as ES modules
// (run with NODE_OPTIONS=--experimental-vm-modules); `.js` specifiers map to the `.ts` sources.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/examples/testing/*.jest.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      'babel-jest',
      { presets: [['@babel/preset-typescript', { allowDeclareFields: true }]] },
    ],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};
