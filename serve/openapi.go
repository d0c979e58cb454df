package serve

import (
	"maps"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// operation documents one route of the API.
type operation struct {
	// id is the operationId: the name a generated client gives the call.
	id        string
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

// operations documents every route: the session routes below, the run
// routes and, for both, the routes they share.
var operations = func() map[string]operation {
	ops := maps.Clone(sessionOperations)
	maps.Copy(ops, runOperations)
	maps.Copy(ops, takeoverOperations)
	for _, kind := range []string{"sessions", "runs"} {
		for key, op := range watchedOperations(kind) {
			ops[key] = op
		}
	}
	return ops
}()

var sessionOperations = map[string]operation{
	"GET /v1/openapi.json": {id: "getOpenAPI", summary: "This document.", responses: map[string]any{
		"200": jsonResp("the OpenAPI 3.1 document", map[string]any{"type": "object"})}},
	"GET /v1/sessions": {id: "listSessions", summary: "The open sessions.", responses: map[string]any{
		"200": jsonResp("the sessions", obj(map[string]any{"sessions": map[string]any{"type": "array", "items": obj(map[string]any{
			"session": strSchema, "scenario": strSchema, "goal": strSchema, "report": strSchema}, "session", "scenario", "goal", "report")}}, "sessions"))}},
	"POST /v1/sessions": {id: "openSession", summary: "Launch a scenario, named relative to --scenarios, as a session.",
		body: obj(map[string]any{"scenario": strSchema}, "scenario"),
		responses: map[string]any{
			"201": jsonResp("the session is up", opened),
			"400": errResp("a bad body or a scenario that cannot be opened (outside the folder, invalid)"),
			"503": map[string]any{"description": "--max-sessions are open; retry after the Retry-After seconds",
				"headers": map[string]any{"Retry-After": map[string]any{"schema": map[string]any{"type": "integer"}}},
				"content": map[string]any{"application/json": map[string]any{"schema": errorSchema}}},
		}},
	"POST /v1/sessions/{id}/calls": {id: "callSessionTool", summary: "Run one of the session's tools; the engine checks args against the tool's closed schema.",
		body: obj(map[string]any{"tool": strSchema, "args": map[string]any{"type": "object"}}, "tool"),
		responses: map[string]any{
			"200": jsonResp("the step ran (a refused or failed step too: see status)", callOut),
			"404": errResp("no open session with this id"),
			"409": errResp("another call on this session is running"),
			"410": errResp("the session has ended; close it for its verdict"),
		}},
	"POST /v1/sessions/{id}/close": {id: "closeSession", summary: "End the session; the runtime decides the verdict (the agent's never upgrades a failure).",
		body: obj(map[string]any{"verdict": verdictIn, "reason": strSchema}),
		responses: map[string]any{
			"200": jsonResp("the verdict and the report directory", closed),
			"404": errResp("no open session with this id"),
		}},
}

// markSchema is the operator's mark on an answer (inbox.Mark).
var markSchema = map[string]any{"type": "string", "enum": inbox.Marks(), "default": inbox.MarkPrivate,
	"description": "What the model may learn of the answer; it can type the answer by ref answer_<question id> whatever the mark. " +
		"private (the default): the model is told only that an answer came, its length and its ref. " +
		"shareable: the model reads the answer. " +
		"secret: like private, and the answer is redacted like any secret of the run from then on: " +
		"in events, the report, the console, logs and every model request; the inbox keeps only its length."}

var (
	runInfo = obj(map[string]any{"run": strSchema, "name": strSchema, "scenario": strSchema, "goal": strSchema,
		"report": strSchema, "started": map[string]any{"type": "string", "format": "date-time"}},
		"run", "name", "scenario", "goal", "report", "started")
	question = obj(map[string]any{"id": strSchema, "text": strSchema, "asked": map[string]any{"type": "string", "format": "date-time"}},
		"id", "text", "asked")
	answer = obj(map[string]any{"question_id": strSchema, "text": strSchema, "by": strSchema,
		"at": map[string]any{"type": "string", "format": "date-time"}, "mark": markSchema}, "question_id", "text", "at", "mark")
	answerIn = obj(map[string]any{"answer": strSchema, "by": strSchema, "mark": markSchema}, "answer")
	entry    = obj(map[string]any{"seq": map[string]any{"type": "integer"}, "kind": map[string]any{"type": "string",
		"enum": []string{"asked", "answered", "posted", "unanswered"}}, "question_id": strSchema, "text": strSchema,
		"by": strSchema, "at": map[string]any{"type": "string", "format": "date-time"}}, "seq", "kind", "text", "at")
	eventStream = map[string]any{"description": "an event stream",
		"content": map[string]any{"text/event-stream": map[string]any{"schema": strSchema}}}
	pngResp = map[string]any{"description": "a PNG", "content": map[string]any{"image/png": map[string]any{
		"schema": map[string]any{"type": "string", "contentMediaType": "image/png"}}}}
)

var runOperations = map[string]operation{
	"GET /v1/runs": {id: "listRuns", summary: "The runs this server publishes (kasmrt run --listen publishes its one run).",
		responses: map[string]any{"200": jsonResp("the runs, oldest first",
			obj(map[string]any{"runs": map[string]any{"type": "array", "items": runInfo}}, "runs"))}},
	"GET /v1/runs/{id}": {id: "getRun", summary: "One published run.",
		responses: map[string]any{"200": jsonResp("the run", runInfo), "404": errResp("no published run with this id")}},
}

// watchedOperations documents the routes a run and a session share;
// kind is "runs" or "sessions".
func watchedOperations(kind string) map[string]operation {
	one := strings.TrimSuffix(kind, "s")
	// One is the kind in an operationId: getRunEvents, getSessionEvents.
	One := strings.ToUpper(one[:1]) + one[1:]
	base := "/v1/" + kind + "/{id}"
	notFound := errResp("no " + one + " with this id")
	noInbox := errResp("no " + one + " with this id, or it has no inbox")
	steerActions := []string{events.SteerPause, events.SteerResume, events.SteerStep, events.SteerApprove,
		events.SteerReject, events.SteerAbort, events.SteerNote}
	steerSummary := "Steer the run as its console does: pause, resume, step (value on/off), approve or reject (reason) the proposed call, abort, note (value) to the model."
	if kind == "sessions" {
		steerActions = []string{events.SteerAbort, events.SteerNote}
		steerSummary = "Steer the session as an operator: abort ends it (the report says so), note is recorded."
	}
	return map[string]operation{
		"GET " + base + "/events": {id: "get" + One + "Events", summary: "The " + one + "'s events as Server-Sent Events (id = seq), from after Last-Event-ID, until run.ended.",
			responses: map[string]any{
				"200": map[string]any{"description": "an event stream; each data line is one events.jsonl line",
					"content": map[string]any{"text/event-stream": map[string]any{"schema": strSchema}}},
				"400": errResp("a Last-Event-ID that is not a seq"),
				"404": notFound,
			}},
		"GET " + base + "/screen": {id: "get" + One + "Screen", summary: "The latest screen the " + one + " captured.",
			responses: map[string]any{"200": pngResp, "404": errResp("no such " + one + ", or no screen yet")}},
		"GET " + base + "/screens/{file}": {id: "get" + One + "ScreenFile", summary: "One capture by the name its events give (screens/NNNN.png).",
			responses: map[string]any{"200": pngResp, "404": errResp("no such " + one + " or screen")}},
		"POST " + base + "/steer": {id: "steer" + One, summary: steerSummary,
			body: obj(map[string]any{"action": map[string]any{"type": "string", "enum": steerActions},
				"value": strSchema, "reason": strSchema}, "action"),
			responses: map[string]any{
				"202": jsonResp("the action was applied", obj(map[string]any{"action": strSchema}, "action")),
				"400": errResp("an action the " + one + " does not take"),
				"404": notFound,
			}},
		"GET " + base + "/questions": {id: "list" + One + "Questions", summary: "The questions still waiting for an answer, oldest first.",
			responses: map[string]any{"200": jsonResp("the pending questions",
				obj(map[string]any{"questions": map[string]any{"type": "array", "items": question}}, "questions")), "404": noInbox}},
		"GET " + base + "/history": {id: "get" + One + "History", summary: "Every question, answer, expiry and posted message so far.",
			responses: map[string]any{"200": jsonResp("the inbox's history",
				obj(map[string]any{"entries": map[string]any{"type": "array", "items": entry}}, "entries")), "404": noInbox}},
		"POST " + base + "/questions/{qid}/answer": {id: "answer" + One + "Question", summary: "Answer a pending question; the first answer wins. The model reads the answer only when it is marked shareable.",
			body: answerIn,
			responses: map[string]any{
				"200": jsonResp("the answer, as recorded", answer),
				"400": errResp("a bad body, a blank answer or an unknown mark"),
				"404": errResp("no such " + one + ", inbox or question"),
				"409": errResp("the question is answered already, or expired"),
				"413": errResp("a body over 64 KiB"),
			}},
		"GET " + base + "/inbox/events": {id: "get" + One + "InboxEvents", summary: "The inbox as Server-Sent Events: a pending snapshot, then one event per change (asked, answered, posted, unanswered).",
			responses: map[string]any{"200": eventStream, "404": noInbox}},
	}
}

// OpenAPI returns the HTTP API's OpenAPI 3.1 document.
func OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, r := range apiRoutes() {
		op := operations[r.method+" "+r.path]
		responses := map[string]any{}
		maps.Copy(responses, op.responses)
		responses["401"] = errResp("no bearer token, or a wrong one (when the server has a token)")
		o := map[string]any{"operationId": op.id, "summary": op.summary, "responses": responses}
		var params []any
		for _, name := range []string{"id", "qid", "file"} {
			if strings.Contains(r.path, "{"+name+"}") {
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": strSchema})
			}
		}
		if strings.HasSuffix(r.path, "}/events") {
			params = append(params, map[string]any{"name": "Last-Event-ID", "in": "header", "schema": strSchema})
		}
		if params != nil {
			o["parameters"] = params
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
			"description": "Sessions for outside agents, and published runs to watch, answer and steer. MCP clients use /mcp instead.",
			// The project declares no licence for its API, so none is
			// granted: all rights are reserved until it names one.
			"license": map[string]any{"name": "All rights reserved"}},
		// The server answers wherever `kasmrt serve --listen` put it; a
		// generated client takes the address as this variable.
		"servers": []any{map[string]any{"url": "http://{listen}", "description": "a kasmrt serve process",
			"variables": map[string]any{"listen": map[string]any{"default": "127.0.0.1:7400",
				"description": "the address kasmrt serve --listen was given"}}}},
		"security":   []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"paths":      paths,
	}
}
