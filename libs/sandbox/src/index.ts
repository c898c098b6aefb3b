export * from './sandbox.module';
export * from './bwrap-argv';
export * from './availability';
export * from './sandbox-launch';
export * from './egress-proxy';
