// The VM's serial console in the browser: an xterm.js terminal over the server's console
// websocket (GET /api/virtual-machines/<id>/console). A browser cannot set headers on a
// websocket, so the token goes as the first message; the bytes are raw both ways.
import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { getToken } from '../../api/token';

const closeReasons: Record<number, string> = {
  4401: 'not signed in',
  4403: 'the console needs the right to change this VM',
  4404: 'VM not found',
  4409: 'the VM is not running',
  4503: 'the console is unavailable',
  4408: 'closed after being idle',
};

export function VMConsole({ id }: { id: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [open, setOpen] = useState(false);
  const [state, setState] = useState('');

  useEffect(() => {
    if (!open || !box.current) return;
    const term = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 13, rows: 24 });
    term.open(box.current);
    const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${window.location.host}/api/virtual-machines/${encodeURIComponent(id)}/console`);
    ws.binaryType = 'arraybuffer';
    const enc = new TextEncoder();
    ws.onopen = () => { ws.send(`Bearer ${getToken() ?? ''}`); setState('connected'); term.focus(); };
    ws.onmessage = (ev) => {
      term.write(typeof ev.data === 'string' ? ev.data : new Uint8Array(ev.data as ArrayBuffer));
    };
    ws.onclose = (ev) => setState(`closed${ev.code ? `: ${closeReasons[ev.code] ?? ev.reason ?? ev.code}` : ''}`);
    const sub = term.onData((d) => { if (ws.readyState === WebSocket.OPEN) ws.send(enc.encode(d)); });
    return () => { sub.dispose(); ws.close(); term.dispose(); };
  }, [open, id]);

  return (
    <section aria-label="Console">
      <h2>Console</h2>
      {!open ? (
        <button type="button" onClick={() => { setState('connecting…'); setOpen(true); }}>Open console</button>
      ) : (
        <>
          <p className="small muted" role="status">Serial console: {state}. <button type="button" onClick={() => setOpen(false)}>Close</button></p>
          <div ref={box} className="vm-console" data-testid="vm-console" />
        </>
      )}
    </section>
  );
}
