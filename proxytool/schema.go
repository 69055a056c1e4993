package proxytool

import "encoding/json"

// toolJSON is the proxy tool's MCP Tool object. Keep the description in
// step with the behaviour: it is all a model learns about the tool.
const toolJSON = `{
  "name": "proxy",
  "title": "MCP proxy",
  "description": "Use every tool, resource and prompt of the MCP servers behind this one through this single tool. Work in three steps:\n1. list: see what exists. {\"action\":\"list\",\"type\":\"tool\"} returns a JSON array of tools (name, description, inputSchema), 100 at a time: page with \"limit\" and \"offset\" (the result's totalCount says how many match), keep one server's with \"filter_server\", or search names and descriptions with \"query\" (keywords, best match first).\n2. info: read one in full, e.g. a tool's inputSchema: {\"action\":\"info\",\"type\":\"tool\",\"path\":\"github_search_issues\"}.\n3. call: run it: {\"action\":\"call\",\"type\":\"tool\",\"path\":\"github_search_issues\",\"args\":{\"query\":\"is:open\"}}.\nFor type \"resource\", path is the resource URI (call reads it; no args). For type \"prompt\", args are the prompt's arguments as strings. list and info return JSON in an embedded resource; call returns the tool's own result.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "action": {
        "type": "string",
        "enum": ["list", "info", "call"],
        "description": "list: find capabilities; info: one capability in full; call: call a tool, read a resource or get a prompt."
      },
      "type": {
        "type": "string",
        "enum": ["tool", "resource", "prompt"],
        "description": "The kind of capability."
      },
      "path": {
        "type": "string",
        "description": "For info and call (not list): the tool or prompt name as list shows it, or the resource URI."
      },
      "args": {
        "anyOf": [
          {"type": "object", "additionalProperties": true},
          {"type": "string", "description": "A JSON object, encoded as a string."}
        ],
        "description": "For call only: the tool's arguments, or the prompt's arguments (string values)."
      },
      "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": 1000,
        "default": 100,
        "description": "For list only: how many items to return."
      },
      "offset": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "For list only: how many matching items to skip."
      },
      "filter_server": {
        "type": "string",
        "description": "For list only: keep the capabilities of the server with this name (or, if there is no such server, those whose name starts with it)."
      },
      "query": {
        "type": "string",
        "description": "For list only: keywords to search names, titles and descriptions for; best match first."
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
// it: name, title, description, inputSchema and annotations. Its hints are
// the most cautious ones, since a call may run any upstream tool.
func Tool() json.RawMessage {
	b, err := compactJSON([]byte(toolJSON))
	if err != nil {
		return json.RawMessage(toolJSON) // TestTool fails first
	}
	return b
}
