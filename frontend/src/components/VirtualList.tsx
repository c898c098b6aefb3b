import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';

interface VirtualListProps {
  count: number;
  rowHeight: number;
  renderRow: (index: number) => ReactNode;
  /** Keep the view pinned to the last row as rows arrive. */
  follow?: boolean;
  /** Called when the user scrolls away from the end (false) or back to it (true). */
  onFollowChange?: (follow: boolean) => void;
  overscan?: number;
  className?: string;
  ariaLabel?: string;
  role?: string;
  /** Keeps this row in view (keyboard navigation). */
  scrollToIndex?: number;
  activeDescendant?: string;
  onKeyDown?: (e: KeyboardEvent<HTMLDivElement>) => void;
}

/**
 * Windowed list of fixed-height rows: only the rows in view (plus a small overscan) are in the
 * DOM, so 100k log lines or 10k tree rows cost the same as a screenful.
 */
export function VirtualList({ count, rowHeight, renderRow, follow, onFollowChange, overscan = 8, className, ariaLabel, role, scrollToIndex, activeDescendant, onKeyDown }: VirtualListProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  // Where we last scrolled to ourselves: scroll events landing elsewhere come from the user.
  const ownScrollTop = useRef(-1);
  const frame = useRef(0);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setHeight(el.clientHeight || 600);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !follow) return;
    const target = Math.max(0, count * rowHeight - el.clientHeight);
    if (Math.abs(el.scrollTop - target) > 1) {
      el.scrollTop = target;
      ownScrollTop.current = el.scrollTop;
      setScrollTop(el.scrollTop);
    }
  }, [count, follow, rowHeight, height]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || scrollToIndex === undefined || scrollToIndex < 0) return;
    const top = scrollToIndex * rowHeight;
    let next = el.scrollTop;
    if (top < el.scrollTop) next = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) next = top + rowHeight - el.clientHeight;
    if (next !== el.scrollTop) {
      el.scrollTop = next;
      setScrollTop(el.scrollTop);
    }
  }, [scrollToIndex, rowHeight]);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    if (onFollowChange && Math.abs(el.scrollTop - ownScrollTop.current) > 1) {
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - rowHeight * 1.5;
      onFollowChange(atEnd);
    }
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => setScrollTop(el.scrollTop));
  }, [onFollowChange, rowHeight]);

  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) rows.push(renderRow(i));

  return (
    <div ref={ref} className={`vlist ${className ?? ''}`} onScroll={onScroll} aria-label={ariaLabel} role={role} tabIndex={0} aria-activedescendant={activeDescendant} onKeyDown={onKeyDown}>
      <div className="vlist-spacer" style={{ height: count * rowHeight }}>
        <div className="vlist-window" style={{ transform: `translateY(${first * rowHeight}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
