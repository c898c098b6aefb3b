import type { Provider } from '@nestjs/common';
import { McpCommand } from './mcp.command';

export const mcpCommands: Provider[] = [McpCommand];
