// The path trace (/network/trace/<portId>): every hop from a port up the fabric to the gateway
// routers (tracePath), as a vertical chain by level with branches; links back to the map.
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem, Message } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { TraceChain } from '../../components/network/TraceChain';
import { groupHops, pathCount } from '../../lib/network/trace';
import './network.css';

const TraceDocument = graphql(`
  query TracePath($portID: ID!) {
    tracePath(portID: $portID) {
      reachedGateway
      from { id name mac vlan addresses }
      hops { level linkID fromHostID fromHostName fromPort toHostID toHostName toPort toRole }
    }
    node(id: $portID) {
      ... on Port { id host { id name } virtualMachine { id name } }
    }
  }
`);

export default function TracePage() {
  const { portId = '' } = useParams();
  const [{ data, fetching, error }] = useQuery({ query: TraceDocument, variables: { portID: portId } });
  const trace = data?.tracePath;
  const levels = useMemo(() => groupHops(trace?.hops ?? []), [trace]);
  const paths = useMemo(() => pathCount(trace?.hops ?? []), [trace]);
  const port = data?.node?.__typename === 'Port' ? data.node : null;
  const owner = port?.host ?? null;
  const mapFrom = owner?.id ?? port?.virtualMachine?.id ?? portId;

  return (
    <div className="trace">
      <div className="breadcrumbs">
        <Link to={`/network?from=${encodeURIComponent(mapFrom)}&depth=2`}>Network map</Link>
        <span>Path trace</span>
      </div>
      <h1>
        Path trace{trace ? <> from {owner ? `${owner.name}:` : ''}{trace.from.name}</> : null}
      </h1>
      {!trace && error && <Problem error={error} title="The path could not be traced" />}
      {!trace && !error && fetching && <Loading what="Tracing the path" />}
      {trace && (
        <>
          <div className="row" style={{ marginBottom: '.5rem' }}>
            {trace.reachedGateway ? (
              <Message kind="ok">
                Reaches the gateways in {levels.length} {levels.length === 1 ? 'level' : 'levels'} over {paths}{' '}
                {paths === 1 ? 'path' : 'paths'} ({trace.hops.length} links).
              </Message>
            ) : (
              <Message kind="error">
                Does not reach a gateway router: {trace.hops.length === 0 ? 'the port has no uplink' : 'the climb stops at level ' + levels.length}.
              </Message>
            )}
            <Link to={`/network?from=${encodeURIComponent(mapFrom)}&depth=2`}>Show on the network map</Link>
          </div>
          <Problem error={error} />
          <TraceChain from={trace.from} startHost={owner} levels={levels} reachedGateway={trace.reachedGateway} />
        </>
      )}
    </div>
  );
}
