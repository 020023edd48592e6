// The path trace drawn as a vertical chain: the start port at the bottom, one row per level
// climbing to the gateways at the top; within a level, the devices left and each link taken
// (port out → device:port in), so several uplinks show as branches side by side.
import { Link } from 'react-router';
import type { PortEnd } from '../../lib/network/types';
import type { TraceLevel } from '../../lib/network/trace';
import { commonPrefix } from '../../lib/network/elements';

const links = (n: number) => `${n} ${n === 1 ? 'link' : 'links'}`;
const role = (r?: string | null) => (r ? r.replace(/_/g, ' ').toLowerCase() : 'device');

interface Props {
  from: PortEnd;
  startHost?: { id: string; name: string } | null;
  levels: TraceLevel[];
  reachedGateway: boolean;
}

/** The chain from the start port (bottom) up to the gateways (top). */
export function TraceChain({ from, startHost, levels, reachedGateway }: Props) {
  // device names without the prefix they all share (e.g. "tky1-dc1-"); the full name on hover
  const names = levels.flatMap((lv) => lv.groups.flatMap((g) => [g.fromHostName, ...g.hops.map((h) => h.toHostName)]));
  const prefix = commonPrefix(names);
  const short = (n: string) => (prefix && n.startsWith(prefix) && n.length > prefix.length ? n.slice(prefix.length) : n);
  return (
    <ol className="trace-levels" aria-label="Hops by level">
      <li className="trace-level" data-testid="trace-start">
        <div className="trace-badge">
          <strong>Start</strong>port
        </div>
        <div className="trace-groups">
          <div className="trace-group trace-start">
            {startHost && (
              <div>
                <Link to={`/hosts/${startHost.id}`}>{startHost.name}</Link>
              </div>
            )}
            <div>
              <strong>{from.name}</strong> · <code>{from.mac ?? 'no MAC'}</code> · VLAN {from.vlan ?? '—'}
            </div>
            {from.addresses.length > 0 && <div className="small">{from.addresses.join(', ')}</div>}
          </div>
        </div>
      </li>
      {levels.map((lv, i) => {
        const top = i === levels.length - 1;
        const gw = top && reachedGateway;
        return (
          <li key={lv.level} className="trace-level" data-testid="trace-level" data-level={lv.level}>
            <div className="trace-badge">
              <strong>Level {lv.level}</strong>
              {lv.roles.map(role).join(', ') || 'devices'}
              <div className="muted">{links(lv.groups.reduce((n, g) => n + g.hops.length, 0))}</div>
            </div>
            <div className="trace-groups">
              {lv.groups.map((g) => (
                <div key={g.fromHostID} className={`trace-group${gw ? ' trace-gw' : ''}`}>
                  <div className="from">
                    from <Link to={`/hosts/${g.fromHostID}`} title={g.fromHostName}>{short(g.fromHostName)}</Link>
                  </div>
                  {g.hops.map((h) => (
                    <div key={h.linkID} className="trace-hop" data-testid="trace-hop" data-to={h.toHostID} title={`link ${h.linkID}`}>
                      <span className="arrow">{h.fromPort} ↑</span>
                      <span>
                        <Link to={`/hosts/${h.toHostID}`} title={h.toHostName}>{short(h.toHostName)}</Link>:<strong>{h.toPort}</strong>
                      </span>
                    </div>
                  ))}
                </div>
              ))}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
