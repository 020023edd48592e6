// A node's ports on the network map: name, MAC, VLAN, IP addresses, the cable's far end and
// the network, with a path trace link for device ports.
import { Link } from 'react-router';
import type { NodePort } from '../../lib/network/elements';

/** The table of ports; trace adds a "Trace" link per port. */
export function PortList({ ports, trace }: { ports: NodePort[]; trace: boolean }) {
  if (ports.length === 0) return <p className="muted small">No ports in this diagram.</p>;
  return (
    <table className="netports">
      <thead>
        <tr>
          <th>Port</th>
          <th>MAC · VLAN · IP</th>
        </tr>
      </thead>
      <tbody>
        {ports.map((p) => (
          <tr key={p.id}>
            <td>
              <strong>{p.name}</strong>
              {trace && (
                <div>
                  <Link to={`/network/trace/${p.id}`} className="small">Trace ↑</Link>
                </div>
              )}
            </td>
            <td className="small">
              <div>
                <code>{p.mac ?? 'no MAC'}</code> · VLAN {p.vlan ?? '—'}
              </div>
              {p.addresses.length > 0 && <div>{p.addresses.join(', ')}</div>}
              {p.peerName && (
                <div className="muted">
                  ↔ {p.peerName}
                  {p.peerPort ? `:${p.peerPort}` : ''}
                </div>
              )}
              {p.networkName && <div className="muted">in {p.networkName}</div>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
