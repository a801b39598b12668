import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'packages/*/dist/', '.data/', 'test-results/', 'coverage/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  // Kysely migrations operate on Kysely<any> by design: they must not depend on today's table types.
  {
    files: ['migrations/**', 'examples/*/migrations/**', 'src/db/migrator.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
)
