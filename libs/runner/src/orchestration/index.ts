export * from './goal-spec';
export * from './quorum';
export * from './facts';
export * from './iterate';
export * from './workflow';
export * from './monitor';
export * from './goal-graph';
