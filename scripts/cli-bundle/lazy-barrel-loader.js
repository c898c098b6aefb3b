'use strict';
// Webpack loader of the CLI and API bundles (scripts/bundle-cli.js, bundle-api.js): makes our own
// libs' CommonJS "barrel" files lazy (no third-party file: bundle-cli.js's lazyBarrels). A barrel
// (an index.js that only re-exports, as tsc emits it for `export * from` and `export { x } from`)
// loads every file it names when it loads; each lib's index names its Nest module, and NestJS with
// it. Here each re-exported file is loaded on the first read of one of its exports instead. A file
// with any other statement is left as it is, so only side-effect-free re-exports change
// (docs/decisions/startup-and-memory.md, "The lazy barrels: our libs only").
const path = require('node:path');
const acorn = require('acorn');
// export names are read by loading the real files, as the app does: Nest's decorators need the Reflect metadata API first
require('reflect-metadata');

const HELPERS = `
function __lazyStar(exports, load, names) {
  let m;
  for (const n of names) Object.defineProperty(exports, n, { enumerable: true, configurable: true, get: () => (m ??= load())[n] });
}
function __lazyModule(load) {
  return require(${JSON.stringify(require.resolve('./stand-in'))})(load);
}
`;

const isRequireOf = (node) =>
  node?.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments.length === 1 && node.arguments[0].type === 'Literal' && typeof node.arguments[0].value === 'string';
const isRelative = (node) => isRequireOf(node) && node.arguments[0].value.startsWith('.');
const calleeName = (call) => (call.callee.type === 'Identifier' ? call.callee.name : call.callee.type === 'MemberExpression' && !call.callee.computed ? call.callee.property.name : undefined);
const isExportsDefine = (call) =>
  call.callee.type === 'MemberExpression' && call.callee.object.name === 'Object' && call.callee.property.name === 'defineProperty' && call.arguments[0]?.name === 'exports';

/** Names assigned in `exports.a = exports.b = void 0;`. */
function voidNames(expr, out) {
  while (expr.type === 'AssignmentExpression' && expr.left.type === 'MemberExpression' && expr.left.object.name === 'exports') {
    out.add(expr.left.property.name);
    expr = expr.right;
  }
  return expr.type === 'UnaryExpression' && expr.operator === 'void';
}

/** What each top-level statement is, or undefined when the file is not a pure barrel. */
function classify(ast) {
  const named = new Set();
  const plan = [];
  for (const st of ast.body) {
    if (st.type === 'ExpressionStatement' && st.directive) plan.push({ keep: st });
    else if (st.type === 'VariableDeclaration' && st.declarations.length === 1) {
      const d = st.declarations[0];
      if (/^__(createBinding|exportStar)$/.test(d.id.name) || (isRequireOf(d.init) && d.init.arguments[0].value === 'tslib')) plan.push({ keep: st });
      else if (isRelative(d.init)) plan.push({ lazyVar: st, name: d.id.name, request: d.init.arguments[0].value });
      else return undefined;
    } else if (st.type === 'ExpressionStatement') {
      const e = st.expression;
      if (e.type === 'AssignmentExpression' && voidNames(e, named)) plan.push({ keep: st });
      else if (e.type === 'CallExpression' && isRequireOf(e) && !isRelative(e)) plan.push({ keep: st }); // e.g. require("reflect-metadata")
      else if (e.type === 'CallExpression' && isExportsDefine(e)) plan.push({ keep: st });
      else if (e.type === 'CallExpression' && calleeName(e) === '__exportStar' && isRelative(e.arguments[0]) && e.arguments[1]?.name === 'exports') {
        plan.push({ star: st, request: e.arguments[0].arguments[0].value });
      } else return undefined;
    } else return undefined;
  }
  return plan.some((p) => p.star || p.lazyVar) ? { plan, named } : undefined;
}

module.exports = function lazyBarrelLoader(source) {
  let ast;
  try {
    ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script' });
  } catch {
    return source;
  }
  const barrel = classify(ast);
  if (!barrel) return source;
  const taken = new Set(barrel.named);
  let out = '';
  for (const step of barrel.plan) {
    if (step.keep) out += `${source.slice(step.keep.start, step.keep.end)}\n`;
    else if (step.lazyVar) out += `var ${step.name} = __lazyModule(() => require(${JSON.stringify(step.request)}));\n`;
    else {
      // the names `export *` gives, known now from the real file (the build runs on the same install);
      // like tslib's __exportStar: no "default", and a name already exported is kept
      const real = require(path.resolve(path.dirname(this.resourcePath), step.request));
      const names = Object.keys(real).filter((n) => n !== 'default' && n !== '__esModule' && !taken.has(n));
      names.forEach((n) => taken.add(n));
      out += `__lazyStar(exports, () => require(${JSON.stringify(step.request)}), ${JSON.stringify(names)});\n`;
    }
  }
  return `${out}${HELPERS}`;
};

module.exports.classify = (source) => classify(acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script' }));
