/**
 * What both apps share at their edges and neither may import from the other (issue #32): the flag
 * specs parsed without NestJS (the CLI's fast paths, the launcher's serve flags), the CLI's usage
 * error and the hot commands' standard output without process.stdout (fd-output.ts). Plain modules: nothing of NestJS loads here. The start-up require-cache stand-ins
 * (lean-load.ts) are imported by path, `@app/boot/lean-load`, by the apps' boot files only: they
 * run before anything else, and the CLI bundle replaces the file that uses them.
 */
export * from './usage-error';
export * from './flag-args';
export * from './serve-flags';
export * from './fd-output';
