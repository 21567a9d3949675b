/**
 * The MCP servers' settings (docs/configuration.md, docs/tools.md).
 */
import { MILLISECONDS, NON_NEGATIVE } from "../process/Accepts.ts"
import { wholeNumberSetting } from "../process/Setting.ts"

/**
 * `MCP_TIMEOUT_MS`: how long one MCP request may take — connecting and listing a server's tools
 * when a turn starts, or one tool call (default 30 s). Past it, the server is left out of the turn,
 * or the call is a tool error the model reads.
 */
export const McpTimeoutMsSetting = wholeNumberSetting("MCP_TIMEOUT_MS", MILLISECONDS, { min: 1 }, 30_000)

/**
 * `MCP_TOOLS_TTL_MS`: how long a server's tool list is used before it is listed again (default
 * 60 s; 0: every turn). A server that says its list changed (`notifications/tools/list_changed`)
 * is listed again by the next turn whatever this says.
 */
export const McpToolsTtlMsSetting = wholeNumberSetting("MCP_TOOLS_TTL_MS", NON_NEGATIVE, { min: 0 }, 60_000)
