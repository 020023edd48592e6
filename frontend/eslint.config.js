// ESLint for the dashboard (flat config): JavaScript's and typescript-eslint's recommended rules
// and React's hooks rules. `npm run lint` (run by `make lint` and CI) fails on any finding,
// warnings included. Generated and built files are not linted.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'src/gql/', 'e2e/artifacts/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
    extends: [reactHooks.configs.flat.recommended],
  },
  {
    // Build configuration and the end-to-end runner run in Node.js.
    files: ['*.{js,ts}', 'e2e/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // The end-to-end specs also run code inside the page (page.evaluate).
    files: ['e2e/**/*.mjs'],
    languageOptions: { globals: globals.browser },
  },
);
