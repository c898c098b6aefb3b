import type { TreeRow } from './tree';

export type TreeKeyAction = { kind: 'move'; index: number } | { kind: 'toggle'; index: number } | { kind: 'select'; index: number };

/**
 * Keyboard navigation of the task tree (WAI-ARIA tree pattern): Up/Down/Home/End move, Right
 * opens a closed row or steps into it, Left closes an open row or steps to its parent,
 * Enter/Space select. Returns null for keys the tree does not handle.
 */
export function treeKeyAction(rows: readonly Pick<TreeRow, 'depth' | 'hasChildren' | 'expanded'>[], active: number, key: string): TreeKeyAction | null {
  if (rows.length === 0) return null;
  const at = Math.min(Math.max(active, 0), rows.length - 1);
  const row = rows[at];
  switch (key) {
    case 'ArrowDown':
      return { kind: 'move', index: Math.min(at + 1, rows.length - 1) };
    case 'ArrowUp':
      return { kind: 'move', index: Math.max(at - 1, 0) };
    case 'Home':
      return { kind: 'move', index: 0 };
    case 'End':
      return { kind: 'move', index: rows.length - 1 };
    case 'ArrowRight':
      if (!row.hasChildren) return null;
      return row.expanded ? { kind: 'move', index: Math.min(at + 1, rows.length - 1) } : { kind: 'toggle', index: at };
    case 'ArrowLeft': {
      if (row.hasChildren && row.expanded) return { kind: 'toggle', index: at };
      for (let i = at - 1; i >= 0; i--) if (rows[i].depth < row.depth) return { kind: 'move', index: i };
      return null;
    }
    case 'Enter':
    case ' ':
      return { kind: 'select', index: at };
    default:
      return null;
  }
}
