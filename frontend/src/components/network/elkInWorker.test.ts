import { describe, expect, it } from 'vitest';
import { copyPositions, transferable } from './elkInWorker';

describe('elkInWorker', () => {
  it('sends a copy without Cytoscape elements', () => {
    const el = { cyclic: null as unknown };
    el.cyclic = el; // like a Cytoscape element: not cloneable, not JSON-able
    const graph = { id: 'root', layoutOptions: { algorithm: 'layered' }, children: [{ id: 'a', width: 10, height: 5, _cyEle: el }], edges: [{ id: 'e', sources: ['a'], targets: ['a'], _cyEle: el }] };
    const out = transferable(graph);
    expect(out).toEqual({ id: 'root', layoutOptions: { algorithm: 'layered' }, children: [{ id: 'a', width: 10, height: 5 }], edges: [{ id: 'e', sources: ['a'], targets: ['a'] }] });
    expect(() => structuredClone(out)).not.toThrow();
    expect(graph.children[0]._cyEle).toBe(el); // the caller's graph is untouched
  });

  it('writes the positions back onto the caller\'s nodes, nested ones included, by id', () => {
    const b = { id: 'b', width: 4, height: 4 };
    const a = { id: 'a', children: [b] };
    const c = { id: 'c', width: 1, height: 1 };
    const graph = { id: 'root', children: [a, c] };
    copyPositions({ id: 'root', x: 0, y: 0, width: 100, height: 50, children: [
      { id: 'c', x: 70, y: 8, width: 1, height: 1 },
      { id: 'a', x: 5, y: 6, width: 30, height: 20, children: [{ id: 'b', x: 2, y: 3, width: 4, height: 4 }] },
    ] }, graph);
    expect(a).toMatchObject({ x: 5, y: 6, width: 30, height: 20 });
    expect(b).toMatchObject({ x: 2, y: 3 });
    expect(c).toMatchObject({ x: 70, y: 8 });
    expect(graph).toMatchObject({ width: 100, height: 50 });
  });
});
