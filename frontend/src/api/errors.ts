// Turns API errors into sentences for people: the GraphQL error code (extensions.code) and
// the input field it names (extensions.field), never a stack or a blank page.
import type { CombinedError } from 'urql';

/** One problem the API reported. */
export interface APIProblem {
  message: string;
  code?: string;
  field?: string;
}

/**
 * The problems in err: GraphQL errors first, else the network error. A problem repeated with the
 * same code, field and message is listed once (an aliased query reports the same FORBIDDEN once
 * per alias).
 */
export function problems(err: CombinedError | undefined | null): APIProblem[] {
  if (!err) return [];
  if (err.graphQLErrors.length > 0) {
    const seen = new Set<string>();
    return err.graphQLErrors
      .map((e) => ({
        message: e.message,
        code: typeof e.extensions?.code === 'string' ? e.extensions.code : undefined,
        field: typeof e.extensions?.field === 'string' ? e.extensions.field : undefined,
      }))
      .filter((p) => {
        const k = `${p.code ?? ''}|${p.field ?? ''}|${p.message}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
  }
  if (err.networkError) {
    return [{ message: `The server could not be reached: ${err.networkError.message}`, code: 'NETWORK' }];
  }
  return [{ message: err.message }];
}

/** A one-line summary of err, e.g. "VALIDATION (name): must not be empty". */
export function describe(err: CombinedError | undefined | null): string {
  return problems(err)
    .map((p) => `${p.code ? p.code : 'ERROR'}${p.field ? ` (${p.field})` : ''}: ${p.message}`)
    .join('; ');
}
