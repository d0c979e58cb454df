package engine

import "fmt"

// modelRecorder is what the run needs of a model transport that records
// the exchanges (--record-model): whether the recording has failed.
type modelRecorder interface {
	RecordErr() error
}

// noteRecordingFailure makes a failed recording a concern (once): the
// recording stopped, but the run and its model calls go on unchanged.
func (m *modelState) noteRecordingFailure() {
	rec, ok := m.r.opts.ModelTransport.(modelRecorder)
	if !ok {
		return
	}
	if err := rec.RecordErr(); err != nil {
		m.concern(fmt.Sprintf("recording the model exchanges stopped (%v); the run went on without it", err))
	}
}
