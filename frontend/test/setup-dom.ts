// jsdom lacks matchMedia and ResizeObserver; Ring UI reads matchMedia when its modules load and
// VirtualList observes its size. Minimal stand-ins for component tests (no layout in jsdom anyway).
if (typeof window !== 'undefined') {
  window.matchMedia ??= (query: string) =>
    ({ matches: false, media: query, onchange: null, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {}, dispatchEvent: () => false }) as MediaQueryList;
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
}
