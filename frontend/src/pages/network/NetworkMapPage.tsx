// The network map (/network?from=<id>&depth=<1..6>): the networkDiagram around a host, switch,
// router, network, port or VM drawn as an interactive graph, a side panel for the selected
// node, a depth selector and the API's truncation warning. Without `from`, a start picker.
// Cytoscape and ELK are imported only from here (through NetworkGraph), so they load with
// this lazily loaded page and stay out of the main bundle.
import { useMemo, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem, Message } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { NetworkGraph, type Hover } from '../../components/network/NetworkGraph';
import { NodePanel } from '../../components/network/NodePanel';
import { HoverTip } from '../../components/network/HoverTip';
import { Legend } from '../../components/network/Legend';
import { StartPicker } from '../../components/network/StartPicker';
import { portsOf } from '../../lib/network/elements';
import { groupDiagram } from '../../lib/network/group';
import type { Diagram } from '../../lib/network/types';
import './network.css';

const DiagramDocument = graphql(`
  query NetworkDiagram($from: ID!, $depth: Int) {
    networkDiagram(from: $from, depth: $depth) {
      truncated
      nodes { id kind name role status cidr vlan }
      edges {
        id kind source target label
        sourcePort { id name mac vlan addresses }
        targetPort { id name mac vlan addresses }
      }
    }
  }
`);

const DEPTHS = [1, 2, 3, 4, 5, 6];

/** The depth in the address, clamped to 1..6 (2 when absent or not a number). */
function parseDepth(s: string | null): number {
  const n = Number.parseInt(s ?? '', 10);
  return Number.isFinite(n) ? Math.min(6, Math.max(1, n)) : 2;
}

export default function NetworkMapPage() {
  const [params, setParams] = useSearchParams();
  const from = params.get('from') ?? '';
  const depth = parseDepth(params.get('depth'));
  const setDepth = (d: number) => setParams(from ? { from, depth: String(d) } : { depth: String(d) });

  return (
    <div className="netmap">
      <div className="spread netmap-head">
        <h1>Network map</h1>
        <label className="netmap-depth">
          Depth
          <select value={depth} onChange={(e) => setDepth(Number(e.target.value))} aria-label="Depth">
            {DEPTHS.map((d) => (
              <option key={d} value={d}>
                {d} {d === 1 ? 'link' : 'links'}
              </option>
            ))}
          </select>
        </label>
      </div>
      {from ? <DiagramView key={from} from={from} depth={depth} /> : <StartPicker depth={depth} />}
    </div>
  );
}

/** The graph, panel and warnings for one start. */
function DiagramView({ from, depth }: { from: string; depth: number }) {
  const navigate = useNavigate();
  const [{ data, fetching, error }] = useQuery({ query: DiagramDocument, variables: { from, depth } });
  const [selected, setSelected] = useState<string | null>(from);
  const [hover, setHover] = useState<Hover | null>(null);
  const [dropped, setDropped] = useState(0);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const full = data?.networkDiagram as Diagram | undefined;
  // a network's many members are one group node until it is expanded (lib/network/group.ts)
  const grouped = useMemo(() => (full ? groupDiagram(full, expanded, from) : null), [full, expanded, from]);
  const diagram = grouped?.diagram;
  const groups = grouped?.groups ?? [];
  const expand = (hub: string) => {
    setExpanded(new Set([...expanded, hub]));
    setSelected(hub);
  };
  const select = (id: string | null) => {
    const g = groups.find((x) => x.id === id);
    if (g) expand(g.hub);
    else setSelected(id);
  };
  const start = diagram?.nodes.find((n) => n.id === from);
  const node = diagram?.nodes.find((n) => n.id === selected) ?? null;
  const ports = useMemo(() => (full && node ? portsOf(full, node.id) : []), [full, node]);

  if (error && !diagram) return <Problem error={error} title="The network map could not be drawn" />;
  if (!diagram) return fetching ? <Loading what="Loading the network diagram" /> : null;

  return (
    <>
      <div className="row netmap-info">
        <span>
          From <strong>{start?.name ?? from}</strong> · {full?.nodes.length} nodes · {full?.edges.length} edges
        </span>
        <Link to="/network">Choose another start</Link>
        {fetching && <span className="muted small">refreshing…</span>}
      </div>
      <Problem error={error} />
      {diagram.truncated && (
        <Message kind="info">
          <strong>Truncated:</strong> the diagram stops at depth {depth} or the size limit; there is more beyond the
          edge of this map. Raise the depth or re-center on a node to see further.
        </Message>
      )}
      {(groups.length > 0 || expanded.size > 0) && (
        <div className="row netmap-groups" data-testid="netmap-groups">
          {groups.map((g) => (
            <button key={g.id} type="button" data-testid="group-expand" data-hub={g.hub} data-members={g.members.length} onClick={() => expand(g.hub)}>
              Expand {g.label} of {g.hubName}
            </button>
          ))}
          {expanded.size > 0 && (
            <button type="button" onClick={() => setExpanded(new Set())}>
              Group large networks again
            </button>
          )}
          <span className="muted small">A dashed node stands for a network’s many members; click it to draw them.</span>
        </div>
      )}
      {dropped > 0 && <Message kind="error">{dropped} edges were left out because one of their ends is not in the diagram.</Message>}
      {diagram.nodes.length === 0 ? (
        <Message kind="info">There is nothing to draw around this start.</Message>
      ) : (
        <div className="netmap-body">
          <NetworkGraph
            diagram={diagram}
            startId={from}
            selectedId={selected}
            onSelect={select}
            onHover={setHover}
            onDrawn={(d) => setDropped(d.dropped)}
          />
          <aside className="netpanel panel">
            {node ? (
              <NodePanel
                node={node}
                ports={ports}
                isStart={node.id === from}
                onRecenter={() => navigate(`/network?from=${encodeURIComponent(node.id)}&depth=${depth}`)}
              />
            ) : (
              <p className="muted">Click a node to see its ports and links; hover for MAC, VLAN and IP addresses.</p>
            )}
            <Legend />
          </aside>
        </div>
      )}
      {hover && <HoverTip hover={hover} diagram={diagram} />}
    </>
  );
}
