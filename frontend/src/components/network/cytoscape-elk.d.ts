// cytoscape-elk ships no types: it is a Cytoscape extension registered with cytoscape.use().
declare module 'cytoscape-elk' {
  import type { Ext } from 'cytoscape';
  const ext: Ext;
  export default ext;
}
