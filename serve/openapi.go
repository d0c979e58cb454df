package serve

import (
	"maps"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
)

// operation documents one route of the API.
type operation struct {
	summary   string
	body      map[string]any // request schema, nil for none
	responses map[string]any
}

func obj(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

var (
	strSchema   = map[string]any{"type": "string"}
	errorSchema = obj(map[string]any{"error": strSchema}, "error")
	verdictIn   = map[string]any{"type": "string", "enum": []string{events.ModelGoalMet, events.ModelGoalNotMet}}
	opened      = obj(map[string]any{"session": strSchema, "goal": strSchema, "report": strSchema,
		"tools": map[string]any{"type": "array", "items": strSchema}}, "session", "goal", "tools", "report")
	closed = obj(map[string]any{"verdict": strSchema, "outcome": strSchema, "report": strSchema,
		"reasons": map[string]any{"type": "array", "items": strSchema}}, "verdict", "outcome", "reasons", "report")
	callOut = obj(map[string]any{"step": map[string]any{"type": "integer"}, "tool": strSchema, "status": strSchema,
		"message": strSchema, "screen": strSchema, "ended": map[string]any{"type": "boolean"}},
		"step", "tool", "status", "message", "ended")
)

func jsonResp(desc string, schema map[string]any) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

func errResp(desc string) map[string]any { return jsonResp(desc, errorSchema) }

var operations = map[string]operation{
	"GET /v1/openapi.json": {summary: "This document.", responses: map[string]any{
		"200": jsonResp("the OpenAPI 3.1 document", map[string]any{"type": "object"})}},
	"GET /v1/sessions": {summary: "The open sessions.", responses: map[string]any{
		"200": jsonResp("the sessions", obj(map[string]any{"sessions": map[string]any{"type": "array", "items": obj(map[string]any{
			"session": strSchema, "scenario": strSchema, "goal": strSchema, "report": strSchema}, "session", "scenario", "goal", "report")}}, "sessions"))}},
	"POST /v1/sessions": {summary: "Launch a scenario, named relative to --scenarios, as a session.",
		body: obj(map[string]any{"scenario": strSchema}, "scenario"),
		responses: map[string]any{
			"201": jsonResp("the session is up", opened),
			"400": errResp("a bad body or a scenario that cannot be opened (outside the folder, invalid)"),
			"503": map[string]any{"description": "--max-sessions are open; retry after the Retry-After seconds",
				"headers": map[string]any{"Retry-After": map[string]any{"schema": map[string]any{"type": "integer"}}},
				"content": map[string]any{"application/json": map[string]any{"schema": errorSchema}}},
		}},
	"POST /v1/sessions/{id}/calls": {summary: "Run one of the session's tools; the engine checks args against the tool's closed schema.",
		body: obj(map[string]any{"tool": strSchema, "args": map[string]any{"type": "object"}}, "tool"),
		responses: map[string]any{
			"200": jsonResp("the step ran (a refused or failed step too: see status)", callOut),
			"404": errResp("no open session with this id"),
			"409": errResp("another call on this session is running"),
			"410": errResp("the session has ended; close it for its verdict"),
		}},
	"GET /v1/sessions/{id}/screen": {summary: "The latest screen the session captured.",
		responses: map[string]any{
			"200": map[string]any{"description": "a PNG", "content": map[string]any{"image/png": map[string]any{
				"schema": map[string]any{"type": "string", "contentMediaType": "image/png"}}}},
			"404": errResp("no such session, or no screen yet"),
		}},
	"GET /v1/sessions/{id}/events": {summary: "The session's events as Server-Sent Events (id = seq), from after Last-Event-ID, until run.ended.",
		responses: map[string]any{
			"200": map[string]any{"description": "an event stream; each data line is one events.jsonl line",
				"content": map[string]any{"text/event-stream": map[string]any{"schema": strSchema}}},
			"400": errResp("a Last-Event-ID that is not a seq"),
			"404": errResp("no open session with this id"),
		}},
	"POST /v1/sessions/{id}/steer": {summary: "Steer the session as an operator: abort ends it (the report says so), note is recorded.",
		body: obj(map[string]any{"action": map[string]any{"type": "string", "enum": []string{events.SteerAbort, events.SteerNote}},
			"value": strSchema, "reason": strSchema}, "action"),
		responses: map[string]any{
			"202": jsonResp("the action was applied", obj(map[string]any{"action": strSchema}, "action")),
			"400": errResp("an action a session does not take"),
			"404": errResp("no open session with this id"),
		}},
	"POST /v1/sessions/{id}/close": {summary: "End the session; the runtime decides the verdict (the agent's never upgrades a failure).",
		body: obj(map[string]any{"verdict": verdictIn, "reason": strSchema}),
		responses: map[string]any{
			"200": jsonResp("the verdict and the report directory", closed),
			"404": errResp("no open session with this id"),
		}},
}

// OpenAPI returns the HTTP API's OpenAPI 3.1 document.
func OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, r := range apiRoutes() {
		op := operations[r.method+" "+r.path]
		responses := map[string]any{}
		maps.Copy(responses, op.responses)
		responses["401"] = errResp("no bearer token, or a wrong one (when the server has a token)")
		o := map[string]any{"summary": op.summary, "responses": responses}
		if strings.Contains(r.path, "{id}") {
			o["parameters"] = []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": strSchema}}
		}
		if r.path == "/v1/sessions/{id}/events" {
			o["parameters"] = append(o["parameters"].([]any), map[string]any{"name": "Last-Event-ID", "in": "header", "schema": strSchema})
		}
		if op.body != nil {
			o["requestBody"] = map[string]any{"required": r.path != "/v1/sessions/{id}/close",
				"content": map[string]any{"application/json": map[string]any{"schema": op.body}}}
		}
		item, _ := paths[r.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.path] = item
		}
		item[strings.ToLower(r.method)] = o
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "kasmrt serve", "version": "1",
			"description": "Sessions for outside agents. MCP clients use /mcp instead."},
		"security":   []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"paths":      paths,
	}
}
