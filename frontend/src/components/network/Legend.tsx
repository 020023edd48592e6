// The network map's legend: node colours by kind and fabric role, line styles by edge kind.
import { palette } from './graphStyle';

const items: [string, string][] = [
  ['Gateway router', palette.gateway],
  ['Floor spine', palette.floorSpine],
  ['Floor leaf', palette.floorLeaf],
  ['Rack spine', palette.rackSpine],
  ['Rack leaf', palette.rackLeaf],
  ['Switch', palette.switch],
  ['Server', palette.host],
  ['VM', palette.vm],
  ['Network', palette.network],
  ['Group of a network’s members (click to expand)', '#dbe6fb'],
];

/** Colour and line keys for the graph. */
export function Legend() {
  return (
    <div className="netlegend" aria-label="Legend">
      {items.map(([label, colour]) => (
        <span key={label}>
          <i style={{ background: colour }} />
          {label}
        </span>
      ))}
      <span><i className="line" />cable (ports)</span>
      <span><i className="dash" />in network</span>
    </div>
  );
}
