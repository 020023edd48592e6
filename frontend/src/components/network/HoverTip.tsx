// The network map's hover tooltip: a node's ports (MAC, VLAN, IP) or a cable's two ends.
import type { Diagram } from '../../lib/network/types';
import { portsOf } from '../../lib/network/elements';
import type { Hover } from './NetworkGraph';

const MAX_PORTS = 8;

/** The tooltip for what the pointer is over, near the pointer. */
export function HoverTip({ hover, diagram }: { hover: Hover; diagram: Diagram }) {
  const style = { left: Math.min(hover.x + 14, window.innerWidth - 330), top: hover.y + 14 };
  if (hover.kind === 'edge') {
    const e = diagram.edges.find((x) => x.id === hover.id);
    if (!e) return null;
    const end = (p: typeof e.sourcePort) =>
      p && (
        <div>
          {p.name} {p.mac && <>· {p.mac}</>} {p.vlan != null && <>· VLAN {p.vlan}</>} {p.addresses.length > 0 && <>· {p.addresses.join(', ')}</>}
        </div>
      );
    return (
      <div className="tooltip" style={style} role="tooltip">
        <strong>{e.kind === 'LINK' ? 'Cable' : e.kind === 'RUNS_ON' ? 'Runs on' : 'Attachment'}</strong>
        <div>{e.label}</div>
        {end(e.sourcePort)}
        {end(e.targetPort)}
      </div>
    );
  }
  const n = diagram.nodes.find((x) => x.id === hover.id);
  if (!n) return null;
  const ports = portsOf(diagram, n.id);
  return (
    <div className="tooltip" style={style} role="tooltip">
      <strong>{n.name}</strong>
      <div>
        {n.kind.toLowerCase()}
        {n.role ? ` · ${n.role.replace(/_/g, ' ').toLowerCase()}` : ''}
        {n.cidr ? ` · ${n.cidr}` : ''}
        {n.vlan != null ? ` · VLAN ${n.vlan}` : ''}
      </div>
      {ports.slice(0, MAX_PORTS).map((p) => (
        <div key={p.id}>
          {p.name}
          {p.mac && ` · ${p.mac}`}
          {p.vlan != null && ` · VLAN ${p.vlan}`}
          {p.addresses.length > 0 && ` · ${p.addresses.join(', ')}`}
        </div>
      ))}
      {ports.length > MAX_PORTS && <div>… {ports.length - MAX_PORTS} more ports</div>}
    </div>
  );
}
