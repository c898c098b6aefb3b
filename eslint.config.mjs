// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

const libBans = {
  patterns: [
    { group: ['@nestjs/platform-*', 'fastify', '@fastify/*', '@willsoto/*', 'prom-client', 'nest-commander', 'nest-commander-*'],
      message: 'libs/ must stay server- and CLI-independent (see conventions.md 2.4).' },
    { group: ['**/apps/**', 'apps/*'], message: 'libs/ must not import apps/.' },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'frontend/**', 'bench/results/**', 'coverage/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  { files: ['libs/**/*.ts'], rules: { 'no-restricted-imports': ['error', libBans] } },
  { files: ['test/**/*.ts', 'bench/**/*.ts'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  { files: ['**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
