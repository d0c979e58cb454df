package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// maxModelList bounds how much of a /v1/models reply is read, and
// modelListTimeout how long it may take: a list is small and does not get
// a generation's time.
const (
	maxModelList     = 1 << 20
	modelListTimeout = 30 * time.Second
)

// ResolveName finds the served model for a profile that names none (the
// OpenAI-compatible default): the server's GET /v1/models, when it serves
// exactly one model. It never guesses: no model, several models or no
// model list are errors that say to set model.name.
func ResolveName(ctx context.Context, cfg Config) (string, error) {
	if cfg.Profile.ServedModel != "" {
		return cfg.Profile.ServedModel, nil
	}
	url, err := ResolveEndpoint(cfg.Endpoint, cfg.Profile.Protocol)
	if err != nil {
		return "", err
	}
	url = strings.TrimSuffix(url, endpointPath(cfg.Profile.Protocol)) + "/models"
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	timeout := cfg.Timeout
	if timeout <= 0 || timeout > modelListTimeout {
		timeout = modelListTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("ask the server for its models: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Key)
	}
	resp, err := client.Do(req)
	if err != nil {
		// The URL is left out of the message: its query may carry a key.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("ask the server for its models (GET /v1/models): %s; set model.name", scrubKey(err.Error(), cfg.Key))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxModelList))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the server answered GET /v1/models with status %d; set model.name", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", fmt.Errorf("the server's GET /v1/models reply is not a model list; set model.name")
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", errors.New("the server lists no model at GET /v1/models; set model.name")
	}
	shown := ids[:min(len(ids), 5)]
	return "", fmt.Errorf("the server serves %d models (%s); set model.name to one of them", len(ids), strings.Join(shown, ", "))
}

func scrubKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
