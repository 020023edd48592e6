// The network map's graph: Cytoscape.js with the ELK layered layout (gateways on top, spines,
// leaves, servers, VMs, networks at the bottom), hubs with many single-link neighbours packed
// in a grid. Hover and click are reported to the page; what was drawn is exposed for tests
// (data-node-count / data-edge-count on the container and window.__vfNetwork).
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import cytoscape, { type Core, type NodeSingular } from 'cytoscape';
import elk from 'cytoscape-elk';
import type { Diagram } from '../../lib/network/types';
import { toElements } from '../../lib/network/elements';
import { bestSwap, findSatellites, gridColumns, gridPositions } from '../../lib/network/layout';
import { graphStyle } from './graphStyle';
import './NetworkGraph.css';

cytoscape.use(elk);

declare global {
  interface Window {
    /** what the network map drew, for tests; position(id) is a node's centre in the container */
    __vfNetwork?: { nodes: string[]; edges: string[]; position(id: string): { x: number; y: number } | null };
  }
}

/** What the pointer is over, with where to show a tooltip. */
export interface Hover {
  kind: 'node' | 'edge';
  id: string;
  x: number;
  y: number;
}

interface Props {
  diagram: Diagram;
  startId: string;
  selectedId: string | null;
  onSelect(id: string | null): void;
  onHover(h: Hover | null): void;
  /** called once the layout is done, with the number of edges dropped for missing ends */
  onDrawn?(info: { nodes: number; edges: number; dropped: number }): void;
}

/** Edges whose labels are always drawn up to this many edges; beyond, on hover and selection. */
const ALL_LABELS_UP_TO = 40;
/** The smallest zoom at which the first view is still readable. */
const READABLE_ZOOM = 0.75;

/** Places the satellites of each hub in a grid under everything else. */
function placeSatellites(cy: Core, sats: Map<string, string[]>) {
  if (sats.size === 0) return;
  const satIds = new Set([...sats.values()].flat());
  const core = cy.nodes().filter((n) => !satIds.has(n.id()));
  let top = core.boundingBox({ includeLabels: true }).y2 + 70;
  const cellW = 140;
  const cellH = 78;
  for (const [hub, ids] of sats) {
    const hx = cy.getElementById(hub).position('x');
    const cols = gridColumns(ids.length);
    const ps = gridPositions(ids.length, hx, top, cellW, cellH, cols);
    ids.forEach((id, i) => cy.getElementById(id).position(ps[i]));
    top += Math.ceil(ids.length / cols) * cellH + 40;
  }
}

/** Swaps the start with a node of its own layer so it sits under the middle of its neighbours. */
function centreStart(cy: Core, start: NodeSingular) {
  if (start.empty()) return;
  const y = start.position('y');
  const row = (cy.nodes().toArray() as NodeSingular[]).filter(
    (n) => Math.abs(n.position('y') - y) < 1 && n.data('rank') === start.data('rank'),
  );
  const rowX = row.map((n) => n.position('x'));
  const i = row.findIndex((n) => n.id() === start.id());
  const j = bestSwap(rowX, i, start.neighborhood().nodes().map((n: NodeSingular) => n.position('x')));
  if (j === i) return;
  const other = row[j];
  const a = { ...start.position() };
  start.position({ ...other.position() });
  other.position(a);
}

/** The start, its neighbours and their uplinks (neighbours one tier higher). */
function focusOf(start: NodeSingular) {
  let set = start.closedNeighborhood().nodes();
  start.neighborhood().nodes().forEach((n) => {
    set = set.union(n.neighborhood().nodes().filter((m) => m.data('rank') < n.data('rank')));
  });
  return set;
}

/** The first view: everything if it is readable, else the start and its surroundings. */
function firstView(cy: Core, start: NodeSingular) {
  cy.fit(undefined, 30);
  if (cy.zoom() >= READABLE_ZOOM || start.empty()) return;
  for (const eles of [focusOf(start), start.closedNeighborhood()]) {
    cy.fit(eles, 50);
    if (cy.zoom() >= READABLE_ZOOM) {
      if (cy.zoom() > 1.3) cy.zoom({ level: 1.3, position: start.position() });
      return;
    }
  }
  cy.zoom(READABLE_ZOOM);
  cy.center(start);
}

/** Draws diagram; re-lays out only when the diagram changes. */
export function NetworkGraph({ diagram, startId, selectedId, onSelect, onHover, onDrawn }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  // The latest callbacks, for cytoscape's listeners (bound once per diagram), updated after
  // each render rather than during it.
  const handlers = useRef({ onSelect, onHover, onDrawn });
  useLayoutEffect(() => {
    handlers.current = { onSelect, onHover, onDrawn };
  });
  const [drawn, setDrawn] = useState<{ nodes: string[]; edges: string[] } | null>(null);
  const [layoutMs, setLayoutMs] = useState(0);

  useEffect(() => {
    if (!box.current) return;
    const els = toElements(diagram, startId);
    const cy = cytoscape({
      container: box.current,
      elements: [...els.nodes, ...els.edges],
      style: graphStyle,
      minZoom: 0.05,
      maxZoom: 3,
      boxSelectionEnabled: false,
      autoungrabify: false,
    });
    cy.nodes().selectify();
    cyRef.current = cy;
    if (els.edges.length <= ALL_LABELS_UP_TO) cy.edges().addClass('show-label');

    const ids = els.nodes.map((n) => n.data.id);
    const sats = findSatellites(ids, els.edges.map((e) => e.data), 12, startId);
    const satIds = new Set([...sats.values()].flat());
    const core = cy.elements().filter((el) =>
      el.isNode() ? !satIds.has(el.id()) : !satIds.has(el.source().id()) && !satIds.has(el.target().id()),
    );
    let alive = true;
    const t0 = performance.now();
    const layout = core.layout({
      name: 'elk',
      fit: false,
      nodeDimensionsIncludeLabels: true,
      elk: {
        algorithm: 'layered',
        'elk.direction': 'DOWN',
        'elk.partitioning.activate': true,
        'elk.layered.spacing.nodeNodeBetweenLayers': 80,
        'elk.spacing.nodeNode': 24,
        'elk.spacing.componentComponent': 60,
        'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
        'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      },
      nodeLayoutOptions: (n: NodeSingular) => ({ 'elk.partitioning.partition': n.data('rank') }),
    } as cytoscape.LayoutOptions);
    layout.one('layoutstop', () => {
      if (!alive) return;
      const start = cy.getElementById(startId);
      centreStart(cy, start);
      placeSatellites(cy, sats);
      firstView(cy, start);
      const out = { nodes: cy.nodes().map((n) => n.id()), edges: cy.edges().map((e) => e.id()) };
      window.__vfNetwork = {
        ...out,
        position: (id) => {
          const n = cy.getElementById(id);
          return n.empty() || cy.destroyed() ? null : n.renderedPosition();
        },
      };
      setDrawn(out);
      setLayoutMs(Math.round(performance.now() - t0));
      handlers.current.onDrawn?.({ nodes: out.nodes.length, edges: out.edges.length, dropped: els.dropped });
    });
    layout.run();

    const tip = (kind: Hover['kind']) => (e: cytoscape.EventObject) => {
      e.target.addClass('hover');
      if (kind === 'node') e.target.connectedEdges().addClass('near');
      const ev = e.originalEvent as MouseEvent | undefined;
      handlers.current.onHover({ kind, id: e.target.id(), x: ev?.clientX ?? 0, y: ev?.clientY ?? 0 });
    };
    cy.on('mouseover', 'node', tip('node'));
    cy.on('mouseover', 'edge', tip('edge'));
    cy.on('mouseout', 'node, edge', (e) => {
      e.target.removeClass('hover');
      cy.edges('.near').not(cy.$(':selected').connectedEdges()).removeClass('near');
      handlers.current.onHover(null);
    });
    cy.on('tap', 'node', (e) => handlers.current.onSelect(e.target.id()));
    cy.on('tap', (e) => {
      if (e.target === cy) handlers.current.onSelect(null);
    });

    return () => {
      alive = false;
      layout.stop();
      cy.destroy();
      cyRef.current = null;
      setDrawn(null);
    };
  }, [diagram, startId]);

  // mirror the page's selection in the graph
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy || !drawn) return;
    cy.batch(() => {
      cy.$(':selected').unselect();
      cy.edges('.near').removeClass('near');
      if (selectedId) {
        const n = cy.getElementById(selectedId);
        n.select();
        n.connectedEdges().addClass('near');
      }
    });
  }, [selectedId, drawn]);

  // Cytoscape sends no mouseout when the pointer leaves the canvas straight from a node
  const leave = () => {
    const cy = cyRef.current;
    if (cy) {
      cy.elements('.hover').removeClass('hover');
      cy.edges('.near').not(cy.$(':selected').connectedEdges()).removeClass('near');
    }
    handlers.current.onHover(null);
  };
  const fitAll = () => cyRef.current?.fit(undefined, 30);
  const zoomBy = (f: number) => {
    const cy = cyRef.current;
    if (!cy) return;
    cy.zoom({ level: cy.zoom() * f, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  };

  return (
    <div className="netgraph-wrap">
      <div
        ref={box}
        className="netgraph"
        data-testid="network-graph"
        onMouseLeave={leave}
        data-start={startId}
        data-ready={drawn ? 'true' : 'false'}
        data-layout-ms={layoutMs}
        data-node-count={drawn?.nodes.length ?? 0}
        data-edge-count={drawn?.edges.length ?? 0}
        role="img"
        aria-label={`Network graph: ${drawn?.nodes.length ?? 0} nodes, ${drawn?.edges.length ?? 0} edges`}
      />
      <div className="netgraph-tools">
        <button type="button" onClick={() => zoomBy(1.25)} aria-label="Zoom in">+</button>
        <button type="button" onClick={() => zoomBy(0.8)} aria-label="Zoom out">−</button>
        <button type="button" onClick={fitAll}>Fit all</button>
      </div>
      {!drawn && <div className="netgraph-busy">Laying out the graph…</div>}
    </div>
  );
}
