// GraphQL Code Generator: typed documents for every graphql(`...`) call under src/, from the
// server's own schema files (graph/*.graphqls), so the dashboard never drifts from the API.
// Output goes to src/gql/ (generated, not committed; `npm run build` regenerates it).
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: '../graph/*.graphqls',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    './src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Time: 'string', Cursor: 'string', Labels: 'Record<string, string>', JSON: 'unknown' },
      },
    },
  },
};

export default config;
