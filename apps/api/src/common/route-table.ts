/** Known routes (method + pattern), to tell "no such path" (404) from "wrong method" (405). */
export class RouteTable {
  private readonly routes: { method: string; re: RegExp }[] = [];

  add(method: string | string[], url: string): void {
    if (url.includes('*')) return; // the static catch-all would make every path "known"
    const pattern = url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const re = new RegExp(`^${pattern}/?$`);
    for (const m of Array.isArray(method) ? method : [method]) this.routes.push({ method: m.toUpperCase(), re });
  }

  /** True when the path exists for some other method. */
  otherMethodMatches(method: string, path: string): boolean {
    const m = method.toUpperCase();
    return this.routes.some((r) => r.method !== m && r.method !== 'HEAD' && r.re.test(path));
  }
}
