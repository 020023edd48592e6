// API problems without repeats: an aliased query reports the same FORBIDDEN once per alias.
import type { CombinedError } from 'urql';
import { problems, type APIProblem } from '../../api/errors';

/** The distinct problems of err (same code, field and message shown once), in order. */
export function uniqueProblems(err: CombinedError | undefined | null): APIProblem[] {
  const seen = new Set<string>();
  return problems(err).filter((p) => {
    const k = `${p.code ?? ''}|${p.field ?? ''}|${p.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
