// Why a VM or service request fits where it does, or nowhere: explainPlacement's summary
// ("0 of 24 nodes fit: 20 lack memory, 4 cordoned") and, unfolded, its per-node table. A tenant
// member, who may not read the fabric, gets no per-node rows from the API: the summary then
// comes from the rejection counts.
import { Link } from 'react-router';
import { orderExplainedNodes, summarizePlacement, summarizeRejections } from '../../lib/compute/placement';
import type { PlacementExplanationFieldsFragment } from '../../gql/graphql';
import { graphql } from '../../gql';
import { formatNumber } from '../../lib/format';
import './compute.css';

export const PlacementExplanationFragment = graphql(`
  fragment PlacementExplanationFields on PlacementExplanation {
    placeable
    errorCode
    message
    unplaced
    cluster { id name }
    placements { node { id name } score }
    rejections { filter code count }
    spread { key mode value vms nodes }
    nodes {
      node { id name }
      rejectedBy
      code
      reason
      total
      scores { plugin score }
    }
  }
`);

export const ExplainDocument = graphql(`
  query ExplainPlacement($input: PlacementRequestInput!) {
    explainPlacement(input: $input) { ...PlacementExplanationFields }
  }
`);

/** The explanation box: summary first, the node table folded. */
export function PlacementExplanation({ explanation: x }: { explanation: PlacementExplanationFieldsFragment }) {
  // No per-node rows: a viewer who may not read the fabric, or no cluster to try; say it in counts.
  const countsOnly = x.nodes.length === 0;
  const nothingTried = countsOnly && x.rejections.length === 0 && !x.placeable;
  const s = summarizePlacement(x.nodes);
  const chosen = new Set(x.placements.map((p) => p.node.id));
  return (
    <section className="placement" data-testid="placement-explanation" aria-label="Placement explanation">
      <h3>
        Placement {x.placeable ? 'possible' : 'impossible'}
        {x.cluster && (
          <>
            {' '}in <Link to={`/clusters/${x.cluster.id}`}>{x.cluster.name}</Link>
          </>
        )}
        {x.errorCode && <code className="placement-code">{x.errorCode}</code>}
      </h3>
      {x.message && <p>{x.message}</p>}
      {nothingTried && <p className="muted">No node was considered: the region has no cluster the policy allows.</p>}
      {x.unplaced > 0 && <p>{x.unplaced} VM(s) of the group could not be placed.</p>}
      {x.spread.length > 0 && (
        <table className="placement-spread" aria-label="Label spread">
          <thead>
            <tr>
              <th>Spread over</th>
              <th>Value</th>
              <th>VMs of the group</th>
              <th>Nodes</th>
            </tr>
          </thead>
          <tbody>
            {x.spread.map((sp) => (
              <tr key={`${sp.mode}/${sp.key}/${sp.value}`}>
                <td><code>{sp.key}</code> ({sp.mode === 'HARD' ? 'one per value' : 'evenly'})</td>
                <td>{sp.value || <span className="muted">no label</span>}</td>
                <td>{sp.vms}</td>
                <td>{sp.nodes}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {countsOnly && !nothingTried && <p data-testid="placement-summary">{summarizeRejections(x.rejections).text}</p>}
      {!countsOnly && <details>
        <summary data-testid="placement-summary">{s.text}</summary>
        {s.reasons.length > 0 && (
          <ul className="placement-reasons">
            {s.reasons.map((r) => (
              <li key={r.filter + r.reason}>
                <strong>{r.count}</strong> rejected by <code>{r.filter}</code>: {r.reason}
              </li>
            ))}
          </ul>
        )}
        <div className="placement-table">
          <table>
            <thead>
              <tr>
                <th>Node</th>
                <th>Result</th>
                <th>Why / scores</th>
                <th>Total</th>
              </tr>
            </thead>
            <tbody>
              {orderExplainedNodes(x.nodes).map((n) => (
                <tr key={n.node.id} className={n.rejectedBy ? 'rejected' : chosen.has(n.node.id) ? 'chosen' : ''}>
                  <td><Link to={`/nodes/${n.node.id}`}>{n.node.name}</Link></td>
                  <td>{n.rejectedBy ? <>rejected by <code>{n.rejectedBy}</code></> : chosen.has(n.node.id) ? 'chosen' : 'fits'}</td>
                  <td>
                    {n.rejectedBy
                      ? `${n.reason ?? ''}${n.code ? ` (${n.code})` : ''}`
                      : n.scores.map((sc) => `${sc.plugin} ${formatNumber(sc.score, 1)}`).join(' · ')}
                  </td>
                  <td>{n.rejectedBy ? '—' : formatNumber(n.total, 1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>}
    </section>
  );
}
