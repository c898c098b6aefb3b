/** Known routes (method + pattern), to tell "no such path" (404) from "wrong method" (405). */
export class RouteTable {
  private readonly routes: { method: string; re: RegExp; anyCase: RegExp; url: string }[] = [];
  /** Every route Fastify registered (method, pattern), as registered: tests enumerate it. */
  readonly registered: { method: string; url: string }[] = [];

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) this.registered.push({ method: m.toUpperCase(), url });
    if (url.includes('*')) return; // the static catch-all would make every path "known"
    const pattern = url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const re = new RegExp(`^${pattern}/?$`);
    for (const m of Array.isArray(method) ? method : [method]) this.routes.push({ method: m.toUpperCase(), re, anyCase: new RegExp(re.source, 'i'), url });
  }

  /** True when a non-wildcard route (other than the `skip`ped ones) matches the path, ignoring case and one trailing slash. */
  matchesAnyIgnoringCase(path: string, skip: (url: string) => boolean = () => false): boolean {
    return this.routes.some((r) => !skip(r.url) && r.anyCase.test(path));
  }

  /** True when the path exists for some other method. */
  otherMethodMatches(method: string, path: string): boolean {
    const m = method.toUpperCase();
    return this.routes.some((r) => r.method !== m && r.method !== 'HEAD' && r.re.test(path));
  }
}

const tables = new WeakMap<object, RouteTable>();

/** The route table recorded for an app (by configureApp), keyed by the app object. */
export function routeTableOf(app: object): RouteTable | undefined {
  return tables.get(app);
}

export function rememberRouteTable(app: object, table: RouteTable): void {
  tables.set(app, table);
}
