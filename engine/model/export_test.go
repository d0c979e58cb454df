package model

// ImageEncodes is how many images the client has base64-encoded.
func (c *Client) ImageEncodes() int {
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	return c.images.encodes
}

// ImageMarker starts the placeholders the client's bodies are marshalled
// with.
func (c *Client) ImageMarker() string { return c.images.marker }

// PlainBody is req's body marshalled with every data URL encoded anew, as
// a client without the cache sends it.
func (c *Client) PlainBody(req Request) ([]byte, error) {
	if c.profile.Protocol == Responses {
		return responsesBody(c.profile.ServedModel, c.opts, req, nil)
	}
	return chatBody(c.profile.ServedModel, c.opts, req, nil)
}

// Body is req's body as Turn marshals it.
func (c *Client) Body(req Request) ([]byte, error) { return c.body(req) }

// SetLimit sets how much of a reply the recorder reads, so a test need not
// send the client's whole cap.
func (r *Recorder) SetLimit(n int64) { r.limit = n }
