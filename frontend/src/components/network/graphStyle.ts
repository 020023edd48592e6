// The network map's Cytoscape stylesheet: shapes and colours by kind and fabric role, labels
// under the nodes that hide when zoomed too far out to read, links solid and attachments dashed.
import type { StylesheetJson } from 'cytoscape';

/** Colours by fabric role and kind; the legend uses the same. */
export const palette = {
  gateway: '#7c3aed',
  floorSpine: '#c2410c',
  floorLeaf: '#d97706',
  rackSpine: '#0e7490',
  rackLeaf: '#0d9488',
  switch: '#475569',
  host: '#2458d6',
  vm: '#1f9d55',
  network: '#64748b',
};

export const graphStyle: StylesheetJson = [
  {
    selector: 'node',
    style: {
      label: 'data(label)',
      'font-size': 11,
      'font-family': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
      color: '#1d2430',
      'text-wrap': 'wrap',
      'text-valign': 'bottom',
      'text-halign': 'center',
      'text-margin-y': 4,
      'min-zoomed-font-size': 7,
      'text-background-color': '#ffffff',
      'text-background-opacity': 0.8,
      'text-background-padding': '1px',
      width: 30,
      height: 30,
      'border-width': 1.5,
      'border-color': '#ffffff',
      'background-color': palette.switch,
    },
  },
  { selector: 'node.kind-host', style: { shape: 'round-rectangle', 'background-color': palette.host, width: 34, height: 26 } },
  { selector: 'node.kind-vm', style: { shape: 'ellipse', 'background-color': palette.vm, width: 26, height: 26 } },
  { selector: 'node.kind-switch', style: { shape: 'round-rectangle', width: 48, height: 20 } },
  { selector: 'node.kind-router', style: { shape: 'round-hexagon', width: 40, height: 32 } },
  {
    selector: 'node.kind-network',
    style: { shape: 'barrel', 'background-color': palette.network, width: 90, height: 22, 'font-weight': 600 },
  },
  {
    selector: 'node.kind-group',
    style: {
      shape: 'round-rectangle',
      'background-color': '#dbe6fb',
      'border-color': palette.host,
      'border-width': 2,
      'border-style': 'dashed',
      width: 70,
      height: 34,
      'font-weight': 600,
    },
  },
  { selector: 'node.role-gateway-router', style: { 'background-color': palette.gateway, width: 46, height: 38 } },
  { selector: 'node.role-floor-spine', style: { 'background-color': palette.floorSpine } },
  { selector: 'node.role-floor-leaf', style: { 'background-color': palette.floorLeaf } },
  { selector: 'node.role-rack-spine', style: { 'background-color': palette.rackSpine } },
  { selector: 'node.role-rack-leaf', style: { 'background-color': palette.rackLeaf } },
  {
    selector: 'node[status != "ACTIVE"][status != ""]',
    style: { 'border-color': '#d9901a', 'border-width': 3 },
  },
  { selector: 'node.start', style: { 'border-color': '#1d2430', 'border-width': 3, 'font-weight': 700 } },
  { selector: 'node.hover', style: { 'overlay-color': '#2458d6', 'overlay-opacity': 0.12, 'overlay-padding': 6 } },
  {
    selector: 'node:selected',
    style: { 'border-color': '#2458d6', 'border-width': 4, 'overlay-color': '#2458d6', 'overlay-opacity': 0.15, 'overlay-padding': 6 },
  },
  {
    selector: 'edge',
    style: {
      width: 1.5,
      'line-color': '#9aa8bb',
      'curve-style': 'bezier',
      'control-point-step-size': 14,
      'font-size': 10,
      color: '#4d5868',
      'min-zoomed-font-size': 8,
      'text-rotation': 'autorotate',
      'text-background-color': '#ffffff',
      'text-background-opacity': 0.85,
      'text-background-padding': '1px',
    },
  },
  { selector: 'edge.attachment', style: { 'line-style': 'dashed', 'line-color': '#b3a5d9', width: 1 } },
  { selector: 'edge.runs-on', style: { 'line-style': 'dotted', 'line-color': '#7aa874', width: 1.5 } },
  { selector: 'edge.show-label, edge.near, edge.hover', style: { label: 'data(label)' } },
  { selector: 'edge.hover, edge.near', style: { 'line-color': '#2458d6', width: 2.5, 'z-index': 10, color: '#1b3f96' } },
];
