// ELK in a Web Worker. cytoscape-elk imports `elkjs/lib/elk.bundled.js`, which runs the layout on
// the page's main thread (0.4–0.8 s for a depth-2 map, during which the page cannot respond).
// vite.config.ts aliases that import to this module: the same ELK API (elk-api.js), talking to
// elkjs's own worker script, which Vite emits as a separate asset fetched only when a map is
// laid out. Each instance (cytoscape-elk makes one per layout run) ends its worker once its
// layout settles, so no worker outlives the layout it ran.
//
// The bundled ELK lays out the graph object it is given in place, and cytoscape-elk reads the
// positions from those very objects (which also hold Cytoscape elements, under `_cyEle`, that
// cannot be sent to a worker). So layout sends a plain copy without the `_` keys and writes the
// computed x, y, width and height back onto the caller's nodes.
import ElkConstructor, { type ELK, type ELKConstructorArguments, type ElkNode } from 'elkjs/lib/elk-api';
import workerUrl from 'elkjs/lib/elk-worker.min.js?url';

/** The ELK API with its layouts computed in a dedicated worker. */
export default class ELKInWorker {
  private readonly elk: ELK;

  constructor(options: ELKConstructorArguments = {}) {
    this.elk = new ElkConstructor({ ...options, workerFactory: () => new Worker(workerUrl) });
  }

  /** Lays out graph in the worker, copies the positions back onto graph, then ends the worker. */
  layout: ELK['layout'] = (graph, args) =>
    this.elk
      .layout(transferable(graph), args)
      .then((laid) => {
        copyPositions(laid, graph);
        return laid;
      })
      .finally(() => this.elk.terminateWorker());
}

/** A structured-clone-safe copy of value: keys starting with '_' (Cytoscape elements) left out. */
export function transferable<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v) => (k.startsWith('_') ? undefined : v)));
}

/** Copies x, y, width and height of from and its children (matched by id) onto to. */
export function copyPositions(from: ElkNode, to: ElkNode): void {
  for (const key of ['x', 'y', 'width', 'height'] as const) if (from[key] !== undefined) to[key] = from[key];
  const byId = new Map((from.children ?? []).map((c) => [c.id, c]));
  for (const child of to.children ?? []) {
    const laid = byId.get(child.id);
    if (laid) copyPositions(laid, child);
  }
}
