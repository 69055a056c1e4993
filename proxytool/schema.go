package proxytool

import (
	"encoding/json"

	"github.com/mcpx/mcpx/rawjson"
)

// toolJSON is the proxy tool's MCP Tool object. Keep the description in
// step with the behaviour: it is all a model learns about the tool.
const toolJSON = `{
  "name": "proxy",
  "title": "MCP proxy",
  "description": "",
  "inputSchema": {
    "type": "object",
    "properties": {
      "action": {
        "type": "string",
        "enum": ["list", "info", "call"]
      },
      "type": {
        "type": "string",
        "enum": ["tool", "resource", "prompt"]
      },
      "path": {
        "type": "string",
        "description": "For info and call: a name from list, or a resource URI."
      },
      "args": {
        "anyOf": [
          {"type": "object", "additionalProperties": true},
          {"type": "string"}
        ],
        "description": "For call: the arguments (a prompt's are strings)."
      },
      "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": 1000,
        "default": 10,
        "description": "For list: page size."
      },
      "offset": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "For list: matches to skip."
      },
      "filter_server": {
        "type": "string",
        "description": "For list: only this server's."
      },
      "query": {
        "type": "string",
        "description": "For list: what you need, in words; best match first."
      },
      "detail": {
        "type": "string",
        "enum": ["summary", "full"],
        "default": "summary",
        "description": "For list: summaries, or full objects."
      }
    },
    "required": ["action", "type"],
    "additionalProperties": false
  },
  "annotations": {
    "title": "MCP proxy",
    "readOnlyHint": false,
    "destructiveHint": true,
    "idempotentHint": false,
    "openWorldHint": true
  }
}`

// Tool returns the MCP Tool object of the proxy tool, as tools/list lists
// it: name, title, description, inputSchema and annotations, with the
// description of an empty catalog ([ToolFor] describes a real one). Its
// hints are the most cautious ones, since a call may run any upstream
// tool.
func Tool() json.RawMessage {
	b, err := compactJSON([]byte(toolJSON))
	if err != nil {
		return json.RawMessage(toolJSON) // TestTool fails first
	}
	out, _, err := rawjson.Replace(b, "description", quote(describe(nil, emptyCatalog{})))
	if err != nil {
		return b
	}
	return out
}
