import { ChangeFeed } from '@app/storage';

export const CHANGE_FEED = Symbol('CHANGE_FEED');

export const changeFeedProvider = { provide: CHANGE_FEED, useFactory: () => new ChangeFeed() };
