/**
 * What both apps share at their edges and neither may import from the other (issue #32): the flag
 * specs parsed without NestJS (the CLI's fast paths, the launcher's serve flags), the start-up
 * require-cache stand-ins, and the CLI's usage error. Plain modules: nothing of NestJS loads here.
 */
export * from './usage-error';
export * from './flag-args';
export * from './serve-flags';
export * from './lean-load';
