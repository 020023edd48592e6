// @vitest-environment jsdom
// Renders with react-dom in jsdom (no testing library in the project).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { RackElevation } from './RackElevation';
import type { ElevationDeviceView } from './types';

const dev = (id: string, position: number, over: Partial<ElevationDeviceView> = {}): ElevationDeviceView => ({
  id,
  name: `dc-floor-rack-a-${id}`,
  kind: 'SERVER',
  role: null,
  model: 'R660',
  position,
  height: 1,
  face: 'FRONT',
  fullDepth: true,
  lifecycle: 'ACTIVE',
  node: { id: `n${id}`, name: id, status: 'READY', cordoned: false, cpuCapacity: 64, cpuAllocated: 8, memoryCapacityMB: 65536, memoryAllocatedMB: 2048, vmCount: 2 },
  alerts: { fatal: 0, critical: 0, warning: 0, worst: null },
  maintainers: [{ id: 'm', name: 'ops', group: true }],
  ...over,
});

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
let root: Root | null = null;
let host: HTMLElement | null = null;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});
function render(ui: ReactNode) {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  act(() => root!.render(ui));
}
const all = (id: string) => [...document.querySelectorAll(`[data-testid="${id}"]`)];
const one = (id: string) => document.querySelector(`[data-testid="${id}"]`)!;

describe('RackElevation', () => {
  it('draws each device once as "device" with its name and position, full-depth ones also on the far face', () => {
    const devices = [dev('s1', 1), dev('s2', 2, { fullDepth: false, face: 'REAR', node: null })];
    render(<RackElevation rackName="rack-a" height={42} devices={devices} onOpen={() => {}} />);
    const drawn = all('device').map((e) => `${e.getAttribute('data-name')}@${e.getAttribute('data-position')}/${e.getAttribute('data-face')}`);
    expect(drawn.sort()).toEqual(['dc-floor-rack-a-s1@1/FRONT', 'dc-floor-rack-a-s2@2/REAR']);
    expect(all('device-far-face')).toHaveLength(1);
    expect(all('device').map((e) => e.getAttribute('data-state')).sort()).toEqual(['none', 'ready']);
  });

  it('shows a tooltip on hover and opens the device on click', () => {
    const onOpen = vi.fn();
    render(<RackElevation rackName="rack-a" height={42} devices={[dev('s1', 5)]} onOpen={onOpen} />);
    const d = one('device');
    act(() => {
      d.dispatchEvent(new MouseEvent('mouseover', { bubbles: true, clientX: 10, clientY: 10 }));
    });
    const tip = one('device-tooltip');
    expect(tip.textContent).toContain('dc-floor-rack-a-s1');
    expect(tip.textContent).toContain('vCPU 8/64');
    expect(tip.textContent).toContain('VMs: 2');
    act(() => {
      d.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    });
    expect(onOpen).toHaveBeenCalledWith(expect.objectContaining({ id: 's1' }));
  });

  it('reports devices it cannot draw and overlapping ones', () => {
    const devices = [dev('a', 10, { height: 2 }), dev('b', 11), dev('c', 42, { height: 2 })];
    render(<RackElevation rackName="rack-a" height={42} devices={devices} onOpen={() => {}} />);
    expect(document.querySelector('[role="status"]')!.textContent).toContain('dc-floor-rack-a-c (outside the rack)');
    expect(document.querySelector('[role="alert"]')!.textContent).toContain('Overlapping');
  });
});
