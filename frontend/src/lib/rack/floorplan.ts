// Floor plan layout: places racks on a grid by the row and position the API gives them (rows
// top to bottom in natural order, positions left to right). Racks without a row or position
// are listed apart. Pure code: see floorplan.test.ts.

export interface FloorRackPlace {
  row?: string | null;
  position?: number | null;
}

export interface PlacedRack<R> {
  rack: R;
  rowIndex: number;
  column: number;
  x: number;
  y: number;
}

export interface FloorLayout<R> {
  rows: string[];
  columns: number;
  placed: PlacedRack<R>[];
  unplaced: R[];
  width: number;
  height: number;
}

export interface FloorGeometry {
  rackWidth: number;
  rackHeight: number;
  gapX: number;
  /** vertical room per row including its aisle */
  rowPitch: number;
  /** room left of the first column for row labels */
  left: number;
  top: number;
}

export const defaultGeometry: FloorGeometry = { rackWidth: 96, rackHeight: 70, gapX: 10, rowPitch: 112, left: 64, top: 28 };

/** Natural order of row names: "2" before "10", "A" before "B". */
export function compareRows(a: string, b: string): number {
  return a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' });
}

/** Places racks (with rack(r) giving row/position) on the grid. Positions start at 1. */
export function layoutFloor<R>(racks: readonly R[], place: (r: R) => FloorRackPlace, g: FloorGeometry = defaultGeometry): FloorLayout<R> {
  const unplaced: R[] = [];
  const withPlace: { rack: R; row: string; position: number }[] = [];
  for (const r of racks) {
    const p = place(r);
    const row = (p.row ?? '').trim();
    if (!row || p.position === null || p.position === undefined || p.position < 1) unplaced.push(r);
    else withPlace.push({ rack: r, row, position: p.position });
  }
  const rows = [...new Set(withPlace.map((w) => w.row))].sort(compareRows);
  const columns = withPlace.reduce((m, w) => Math.max(m, w.position), 0);
  const placed = withPlace.map((w) => {
    const rowIndex = rows.indexOf(w.row);
    return {
      rack: w.rack,
      rowIndex,
      column: w.position,
      x: g.left + (w.position - 1) * (g.rackWidth + g.gapX),
      y: g.top + rowIndex * g.rowPitch,
    };
  });
  placed.sort((a, b) => a.rowIndex - b.rowIndex || a.column - b.column);
  return {
    rows,
    columns,
    placed,
    unplaced,
    width: g.left + columns * (g.rackWidth + g.gapX) + 16,
    height: g.top + rows.length * g.rowPitch,
  };
}
