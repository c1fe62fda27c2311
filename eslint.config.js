// ESLint: typescript-eslint's recommended type-checked rules over the TypeScript of the project.
// Formatting is Prettier's (npm run format); the layering of folders is checked by scripts/check-layers.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'output/', 'node_modules/', '**/*.cjs', '**/*.mjs', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
);
