// The network map's side panel for the selected node: what it is, links to its page, its ports,
// and "Re-center here" to redraw the map from it.
import { Link } from 'react-router';
import type { DiagramNode } from '../../lib/network/types';
import type { NodePort } from '../../lib/network/elements';
import { StatusBadge } from '../StatusBadge';
import { PortList } from './PortList';

const kindName: Record<string, string> = { HOST: 'Server', SWITCH: 'Switch', ROUTER: 'Router', VM: 'Virtual machine', NETWORK: 'Network' };

/** Where the dashboard shows a node of this kind, if anywhere. */
function pageOf(n: DiagramNode): string | null {
  if (n.kind === 'VM') return `/vms/${n.id}`;
  if (n.kind === 'NETWORK') return null;
  return `/hosts/${n.id}`;
}

interface Props {
  node: DiagramNode;
  ports: NodePort[];
  isStart: boolean;
  onRecenter(): void;
}

/** Details of one node. */
export function NodePanel({ node, ports, isStart, onRecenter }: Props) {
  const page = pageOf(node);
  return (
    <section className="netpanel-node" aria-label="Selected node">
      <h2 title={node.name}>{node.name}</h2>
      <div className="row small">
        <span>{kindName[node.kind] ?? node.kind}</span>
        {node.role && <span className="muted">{node.role.replace(/_/g, ' ').toLowerCase()}</span>}
        {node.status && <StatusBadge status={node.status} />}
      </div>
      {node.kind === 'NETWORK' && (
        <p className="small">
          {node.cidr && <code>{node.cidr}</code>} {node.vlan != null && <>VLAN {node.vlan}</>}
        </p>
      )}
      <div className="row netpanel-actions">
        {page && <Link to={page}>Open {node.kind === 'VM' ? 'VM' : 'host'} page</Link>}
        {isStart ? (
          <span className="muted small">the map’s centre</span>
        ) : (
          <button type="button" onClick={onRecenter}>Re-center here</button>
        )}
      </div>
      <h3>Ports</h3>
      <PortList ports={ports} trace={node.kind !== 'NETWORK'} />
    </section>
  );
}
