// A just-created token's secret, shown this once with a copy button.
import { useState } from 'react';
import { Message } from '../Problem';

export function NewTokenSecret({ name, token, onDone }: { name: string; token: string; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  async function copy() {
    try {
      await navigator.clipboard.writeText(token);
      setCopied('Copied.');
    } catch {
      setCopied('Copying is not allowed here: select the token and copy it by hand.');
    }
  }
  return (
    <div className="card" aria-label="New token secret" data-testid="new-token">
      <Message kind="ok">
        <strong>Token “{name}” created.</strong> Copy it now: <strong>it will not be shown again</strong>.
      </Message>
      <div className="row">
        <output className="secret" data-testid="token-secret" style={{ flex: 1 }}>{token}</output>
        <button type="button" onClick={copy}>Copy</button>
        <button type="button" className="primary" onClick={onDone}>Done</button>
      </div>
      {copied && <p className="small muted">{copied}</p>}
    </div>
  );
}
