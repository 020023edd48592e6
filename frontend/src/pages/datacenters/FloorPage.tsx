// /floors/<id>: the floor plan (floorView) drawn as SVG, racks coloured by occupancy or by worst
// open alert (a toggle), with a legend and a table of the racks; click a rack for /racks/<id>.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { FloorPlan, type FloorColouring } from '../../components/rack/FloorPlan';
import { Legend } from '../../components/rack/Legend';
import { alertSwatches, occupancyBands } from '../../lib/rack/colors';
import { fromCounts } from '../../lib/rack/occupancy';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { DeleteControl } from '../../components/dcim/DeleteControl';
import { NewRackForm } from '../../components/dcim/forms';
import { DeleteFloorDocument } from '../../components/dcim/deletes';
import './datacenters.css';
import { formatNumber } from '../../lib/format';


const FloorDocument = graphql(`
  query FloorPlan($id: ID!) {
    floorView(id: $id) {
      id
      name
      datacenterID
      datacenterName
      racks {
        rack { id name row position height status powerZone networkZone rackZone }
        usedUnits
        freeUnits
        hosts
        capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB }
        alerts { fatal critical warning worst }
      }
    }
  }
`);

export default function FloorPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [colourBy, setColourBy] = useState<FloorColouring>('occupancy');
  const [{ data, error, fetching }] = useQuery({ query: FloorDocument, variables: { id } });
  const [, deleteFloor] = useMutation(DeleteFloorDocument);
  const v = data?.floorView;
  if (!v) {
    return (
      <div>
        <nav className="breadcrumbs" aria-label="Breadcrumbs">
          <Link to="/datacenters">Datacenters</Link>
        </nav>
        <h1>Floor</h1>
        <Problem error={error} />
        {fetching && <Loading />}
      </div>
    );
  }
  const used = v.racks.reduce((n, r) => n + r.usedUnits, 0);
  const total = v.racks.reduce((n, r) => n + r.rack.height, 0);
  const legend = colourBy === 'occupancy' ? occupancyBands.map((b) => b.swatch) : Object.values(alertSwatches);
  return (
    <div>
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link to="/datacenters">Datacenters</Link>
        <Link to={`/datacenters/${v.datacenterID}`}>{v.datacenterName}</Link>
        <span>{v.name}</span>
      </nav>
      <div className="spread">
        <div className="row">
          <h1>{v.name}</h1>
          <HistoryLink type="Floor" id={v.id} />
          <DeleteControl what={`floor ${v.name}`} onDelete={() => deleteFloor({ id: v.id })} onDone={() => navigate(`/datacenters/${v.datacenterID}`)} />
        </div>
        <div className="tabs" role="tablist" aria-label="Colour racks by">
          <button type="button" role="tab" aria-selected={colourBy === 'occupancy'} onClick={() => setColourBy('occupancy')}>
            Occupancy
          </button>
          <button type="button" role="tab" aria-selected={colourBy === 'alerts'} onClick={() => setColourBy('alerts')}>
            Alerts
          </button>
        </div>
      </div>
      <Problem error={error} />
      <p className="muted">
        {formatNumber(v.racks.length)} racks · {formatNumber(used)}/{formatNumber(total)} units used ({fromCounts(used, total).percent} %)
      </p>
      {v.racks.length === 0 ? (
        <p className="muted">This floor has no racks.</p>
      ) : (
        <div className="card">
          <Legend swatches={legend} title={colourBy === 'occupancy' ? 'Occupancy' : 'Worst open alert'} />
          <FloorPlan racks={v.racks} colourBy={colourBy} onOpen={(r) => navigate(`/racks/${r.rack.id}`)} />
        </div>
      )}
      <div style={{ marginTop: '1rem', maxWidth: 760 }}>
        <NewRackForm floorID={v.id} onDone={(rackID) => navigate(`/racks/${rackID}`)} />
      </div>
    </div>
  );
}
