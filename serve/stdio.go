package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one line of kasmrt mcp's input, as MaxBodyBytes
// bounds an HTTP request: a message is a tool call's few names and numbers.
const MaxLineBytes = MaxBodyBytes

// NewStdioTransport is the transport of kasmrt mcp: newline-delimited
// JSON-RPC read from r and written to w. The SDK's own IOTransport ends
// the connection, and with it every session the client has open, at the
// first line that is not a JSON-RPC message; this one answers such a
// line — malformed JSON, a batch, a message JSON-RPC does not know, a line
// over MaxLineBytes — with a JSON-RPC error and reads the next.
func NewStdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &stdioTransport{r: r, w: w}
}

type stdioTransport struct {
	r io.Reader
	w io.Writer
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, toSDK := io.Pipe()
	out := &lineWriter{w: t.w}
	go func() { toSDK.CloseWithError(filterLines(t.r, toSDK, out, MaxLineBytes)) }()
	return (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
}

// lineWriter serialises the SDK's writes and the filter's error replies,
// each one whole line in one Write, so none interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves w open: it is the process's standard output.
func (l *lineWriter) Close() error { return nil }

// filterLines copies each JSON-RPC message line of r to good and answers
// every other line on reply, until r ends (nil) or good is closed.
func filterLines(r io.Reader, good io.Writer, reply io.Writer, max int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, max)
		switch msg := bytes.TrimSpace(line); {
		case tooLong:
			writeRPCError(reply, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the line is over %d bytes, the most one message may take; it was not read", max))
		case len(msg) == 0:
		default:
			if id, code, problem := checkMessage(msg); problem != "" {
				writeRPCError(reply, id, code, problem)
			} else if _, werr := good.Write(append(msg, '\n')); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to the next newline, keeping at most max bytes of the
// line; a longer line is read to its end and reported tooLong, never held.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// checkMessage says what is wrong with a line, with the JSON-RPC error
// code and the request's id when one can be read; "" when it is a message
// the SDK can take.
func checkMessage(msg []byte) (id any, code int64, problem string) {
	if !json.Valid(msg) {
		return nil, jsonrpc.CodeParseError, "the line is not JSON"
	}
	if msg[0] == '[' {
		return nil, jsonrpc.CodeInvalidRequest, "batches are not served: send one message a line"
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil && resp.Result == nil && resp.Error == nil {
		err = errors.New("a response has a result or an error")
	}
	if err == nil {
		return nil, 0, ""
	}
	var head struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(msg, &head)
	switch head.ID.(type) {
	case string, float64:
		id = head.ID
	}
	return id, jsonrpc.CodeInvalidRequest, "the line is not a JSON-RPC 2.0 message: " + err.Error()
}

// writeRPCError writes a JSON-RPC error response as one line.
func writeRPCError(w io.Writer, id any, code int64, message string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	_, _ = w.Write(append(b, '\n'))
}
