// How API errors look on every page (the one error component): a message box naming the code
// and field of each distinct problem, never a blank page.
import type { CombinedError } from 'urql';
import { problems } from '../api/errors';

/** Shows the problems of err (nothing when err is empty). */
export function Problem({ error, title }: { error?: CombinedError | null; title?: string }) {
  const ps = problems(error);
  if (ps.length === 0) return null;
  return (
    <div className="problem" role="alert">
      {title && <strong>{title}</strong>}
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

/** A plain message box for errors found in the browser (bad form input, ...). */
export function Message({ kind = 'info', children }: { kind?: 'info' | 'error' | 'ok'; children: React.ReactNode }) {
  return <div className={`message message-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>{children}</div>;
}
