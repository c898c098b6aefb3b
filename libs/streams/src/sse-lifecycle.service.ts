import { Injectable, OnApplicationShutdown, BeforeApplicationShutdown } from '@nestjs/common';
import { Subject } from 'rxjs';

/** Ends every open SSE stream when the application shuts down. */
@Injectable()
export class SseLifecycle implements BeforeApplicationShutdown, OnApplicationShutdown {
  readonly shutdown$ = new Subject<void>();

  beforeApplicationShutdown(): void {
    this.shutdown$.next();
  }

  onApplicationShutdown(): void {
    this.shutdown$.next();
    this.shutdown$.complete();
  }
}
