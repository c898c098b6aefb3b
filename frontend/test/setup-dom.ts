// jsdom has no layout engine, so no ResizeObserver: components that measure themselves (VirtualList)
// fall back to their default size, which is what a test without layout can check.
if (typeof window !== 'undefined' && !('ResizeObserver' in globalThis)) {
  (globalThis as Record<string, unknown>).ResizeObserver = class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  };
}
if (typeof window !== 'undefined') {
  const { cleanup } = await import('@testing-library/react');
  const { afterEach } = await import('vitest');
  afterEach(() => cleanup());
}
export {};
