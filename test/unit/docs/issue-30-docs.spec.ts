import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// Issue #30 defect 9: what the docs say about /metrics and about the DNS-rebinding defence.
const doc = (name: string) => readFileSync(join(__dirname, '..', '..', '..', 'docs', name), 'utf8');

describe('docs: /metrics and the DNS-rebinding defence (#30 defect 9)', () => {
  it('the API reference says /metrics needs the key unless api.metrics_public', () => {
    const row = doc('api-reference.md').split('\n').find((l) => l.startsWith('| GET | `/metrics` |'));
    expect(row).toMatch(/needs the key when one is set, unless `api.metrics_public: true`/);
  });

  it('the decisions name the Host allow-list, not the Origin-vs-Host comparison, as the DNS-rebinding defence', () => {
    const security = doc('decisions/security.md');
    expect(security).toMatch(/^## DNS rebinding: a Host allow-list on every request/m);
    expect(security.replace(/\s+/g, ' ')).toMatch(/That check is a cross-site defence, \*\*not\*\* the DNS-rebinding defence/);
    expect(doc('decisions.md')).toMatch(/\| A Host allow-list on every request \| current \|/);
  });
});
