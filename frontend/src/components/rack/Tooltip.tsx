// A tooltip that follows the pointer (the .tooltip style), kept inside the window.
import type { ReactNode } from 'react';

export interface TipAt {
  x: number;
  y: number;
}

/** Shows children near the pointer position at (nothing when at is null). */
export function Tooltip({ at, children, testId }: { at: TipAt | null; children: ReactNode; testId?: string }) {
  if (!at) return null;
  const flipX = at.x > window.innerWidth - 340;
  const flipY = at.y > window.innerHeight - 220;
  const style = {
    left: flipX ? undefined : at.x + 14,
    right: flipX ? window.innerWidth - at.x + 14 : undefined,
    top: flipY ? undefined : at.y + 14,
    bottom: flipY ? window.innerHeight - at.y + 14 : undefined,
  };
  return (
    <div className="tooltip" role="tooltip" style={style} data-testid={testId}>
      {children}
    </div>
  );
}
