package engine

import (
	"context"

	"github.com/kasmrt/kasmrt/scenarios"
)

// builtinTool runs a built-in tool's call once the guards let it through;
// n is the call's step number.
type builtinTool func(s *runState, ctx context.Context, n int, c call) result

// builtinTools maps every built-in tool of the catalogue (scenarios.Catalog)
// to its implementation. A new tool is its catalogue entry plus one line
// here; TestBuiltinToolsCoverTheCatalogue fails until both exist. It is a
// function rather than a variable so no package state can be changed.
func builtinTools() map[string]builtinTool {
	return map[string]builtinTool{
		"observe_screen": func(s *runState, ctx context.Context, _ int, _ call) result { return s.act.observeScreen(ctx) },
		"press_key":      func(s *runState, ctx context.Context, _ int, c call) result { return s.act.pressKey(ctx, c) },
		"click":          func(s *runState, ctx context.Context, _ int, c call) result { return s.act.click(ctx, c) },
		"type_text":      func(s *runState, ctx context.Context, _ int, c call) result { return s.act.typeText(ctx, c) },
		"wait":           func(s *runState, ctx context.Context, _ int, c call) result { return s.act.wait(ctx, c) },
		"wait_while":     func(s *runState, ctx context.Context, _ int, c call) result { return s.act.waitWhile(ctx, c) },
		"switch_window": func(s *runState, ctx context.Context, _ int, c call) result {
			name, _ := c.Args["name"].(string)
			return s.act.switchWindow(ctx, name)
		},
		"record_verdict":    func(s *runState, ctx context.Context, _ int, c call) result { return s.act.recordVerdict(ctx, c) },
		"escalate":          func(s *runState, _ context.Context, _ int, c call) result { return s.act.escalate(c) },
		"respond":           func(s *runState, _ context.Context, n int, c call) result { return s.act.respond(n, c) },
		"ask_human":         func(s *runState, ctx context.Context, _ int, c call) result { return s.askHuman(ctx, c) },
		"check_expectation": func(s *runState, ctx context.Context, n int, c call) result { return s.act.checkExpectation(ctx, n, c) },
		"click_grounded":    (*runState).clickGrounded,
		"click_element":     func(s *runState, ctx context.Context, _ int, c call) result { return s.act.clickElement(ctx, c) },
		"cdp_url":           cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result { return s.act.cdpURL(ctx, callCtx, c) }),
		"cdp_list_interactive": cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result {
			return s.act.cdpListInteractive(ctx, callCtx, c)
		}),
		"cdp_click_described": cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result {
			return s.act.cdpClickDescribed(ctx, callCtx, c)
		}),
		"cdp_query":    cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result { return s.act.cdpQuery(ctx, callCtx, c) }),
		"cdp_click":    cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result { return s.act.cdpClick(ctx, callCtx, c) }),
		"cdp_fill":     cdpTool(func(s *runState, ctx, callCtx context.Context, c call) result { return s.act.cdpFill(ctx, callCtx, c) }),
		"cdp_wait":     cdpTool(func(s *runState, ctx, _ context.Context, c call) result { return s.act.cdpWait(ctx, c) }),
		"cdp_navigate": cdpTool(func(s *runState, ctx, _ context.Context, c call) result { return s.act.cdpNavigate(ctx, c) }),
		// A scripted expect: step runs nothing; its checks run after it.
		scenarios.ExpectTool: func(*runState, context.Context, int, call) result { return ok("") },
	}
}
