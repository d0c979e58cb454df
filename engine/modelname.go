package engine

import (
	"context"
	"net/http"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

// ResolveModelName names the served model when the operator file's
// profile does not (the OpenAI-compatible default without model.name): the
// server's only model from GET /v1/models. It sets model.name in files, so
// the run sends that name; a server with no model list, none or several
// models is a problem positioned at model.name. Files without a model, or
// whose model is named, are left alone.
func ResolveModelName(ctx context.Context, files *scenarios.Files, transport http.RoundTripper) error {
	op := files.Operator
	if !op.HasModel() || op.Model.Name != "" {
		return nil
	}
	cfg, err := ModelConfig(op, transport)
	if err != nil || cfg.Profile.ServedModel != "" {
		return err
	}
	name, err := model.ResolveName(ctx, cfg)
	if err != nil {
		return scenarios.Problems{{Pos: op.KeyPos("model.name"), Msg: err.Error()}}
	}
	op.Model.Name = name
	return nil
}
