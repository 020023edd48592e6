// API problems for pages whose query asks the same thing several times (aliased counts): each
// distinct code + message once, in the shared .problem box.
import type { CombinedError } from 'urql';
import { uniqueProblems } from '../../lib/ops/problems';

export function OpsProblem({ error }: { error?: CombinedError | null }) {
  const ps = uniqueProblems(error);
  if (ps.length === 0) return null;
  return (
    <div className="problem" role="alert">
      <ul>
        {ps.map((p, i) => (
          <li key={i}>
            {p.code && <code className="code">{p.code}</code>}
            {p.field && <span className="field"> {p.field}</span>} {p.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
