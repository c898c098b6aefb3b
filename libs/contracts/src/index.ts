/**
 * The wire contract of the conductor API: JSON shapes only, shared by the API's mappers, the CLI
 * client and the dashboard (frontend/src/api). Types only — nothing here may emit runtime code,
 * because the frontend imports it through a path alias (test/arch checks it).
 */
export type * from './runs';
export type * from './projects';
export type * from './messages';
export type * from './tasks';
export type * from './usage';
export type * from './server';
export type * from './schedules';
export type * from './worktrees';
