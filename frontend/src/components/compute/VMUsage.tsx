// The VM's (or node's) usage graphs: CPU, memory, disk and network from Prometheus,
// queried through the server (GET /api/usage), which scopes them to what the viewer may see.
import { useEffect, useState } from 'react';
import { getToken } from '../../api/token';

type Series = { name: string; unit: string; points: [number, number][] };
type Graph = { series: Series[]; range: string };

const ranges = ['hour', 'day', 'week', 'month'] as const;
const titles: Record<string, string> = {
  cpu: 'CPU', memory: 'Memory', disk_read: 'Disk read', disk_write: 'Disk write', net_rx: 'Network in', net_tx: 'Network out',
};

function bytes(v: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function value(unit: string, v: number): string {
  if (unit === 'cores') return `${v.toFixed(2)} cores`;
  if (unit === 'bytes') return bytes(v);
  return `${bytes(v)}/s`;
}

function Spark({ s }: { s: Series }) {
  const w = 280, h = 60;
  const pts = s.points;
  if (pts.length === 0) return <p className="small muted">No data yet.</p>;
  const t0 = pts[0][0], t1 = pts[pts.length - 1][0] || t0 + 1;
  const hi = Math.max(...pts.map((p) => p[1]), 1e-9);
  const d = pts.map((p) => `${(((p[0] - t0) / Math.max(t1 - t0, 1)) * w).toFixed(1)},${(h - (p[1] / hi) * h).toFixed(1)}`).join(' ');
  return (
    <svg width={w} height={h} role="img" aria-label={`${titles[s.name] ?? s.name} graph`}>
      <polyline points={d} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

export function VMUsage({ vmID, nodeID }: { vmID?: string; nodeID?: string }) {
  const [range, setRange] = useState<(typeof ranges)[number]>('hour');
  // The answer, with the request it answers: a stale one reads as loading.
  const [res, setRes] = useState<{ key: string; graph?: Graph; error?: string }>({ key: '' });
  const key = `${vmID ?? ''}|${nodeID ?? ''}|${range}`;
  useEffect(() => {
    const q = new URLSearchParams({ range });
    if (vmID) q.set('vm', vmID);
    if (nodeID) q.set('node', nodeID);
    const ctl = new AbortController();
    fetch(`/api/usage?${q}`, { headers: { Authorization: `Bearer ${getToken() ?? ''}` }, signal: ctl.signal })
      .then(async (r) => {
        const body = await r.json();
        if (!r.ok) throw new Error(body?.errors?.[0]?.message ?? r.statusText);
        setRes({ key, graph: body as Graph });
      })
      .catch((e: Error) => { if (e.name !== 'AbortError') setRes({ key, error: e.message }); });
    return () => ctl.abort();
  }, [vmID, nodeID, range, key]);
  const graph = res.key === key ? res.graph : undefined;
  const error = res.key === key ? res.error : undefined;
  return (
    <section aria-label="Usage graphs">
      <h2>Usage</h2>
      <div role="group" aria-label="Range">
        {ranges.map((r) => (
          <button key={r} type="button" aria-pressed={r === range} onClick={() => setRange(r)}>{r}</button>
        ))}
      </div>
      {error ? <p className="muted" role="status">Graphs unavailable: {error}</p> : !graph ? <p className="muted">Loading…</p> : (
        <div className="usage-graphs">
          {graph.series.map((s) => (
            <figure key={s.name} className="card">
              <figcaption>{titles[s.name] ?? s.name}{s.points.length > 0 && <> — now {value(s.unit, s.points[s.points.length - 1][1])}</>}</figcaption>
              <Spark s={s} />
            </figure>
          ))}
        </div>
      )}
    </section>
  );
}
