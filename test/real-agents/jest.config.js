// Real agent CLIs against a fake model server: `npm run test:real-agents` (not part of `npm test`).
// Needs the CLIs installed outside the repo, e.g.
//   npm install --prefix /tmp/real-agents @anthropic-ai/claude-code @openai/codex @google/gemini-cli
// and REAL_AGENTS_BIN pointing at their bin folder (default /tmp/real-agents/node_modules/.bin).
const base = require('../../jest.config.js');

module.exports = {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/test/real-agents'],
  testRegex: '.*\\.real-spec\\.ts$',
  testTimeout: 180000,
};
