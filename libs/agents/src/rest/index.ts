export * from './retry';
export * from './sse';
export * from './rest-options';
export * from './output-files';
export * from './perplexity';
export * from './xai';
export * from './usage';
