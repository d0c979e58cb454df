package engine

import "fmt"

// modelRecorder is what the run needs of a model transport that records
// the exchanges (--record-model): whether the recording has failed.
type modelRecorder interface {
	RecordErr() error
}

// noteRecordingFailure makes a failed recording a concern (once): the
// recording stopped, but the run and its model calls go on unchanged.
func (s *runState) noteRecordingFailure() {
	rec, ok := s.r.opts.ModelTransport.(modelRecorder)
	if !ok {
		return
	}
	if err := rec.RecordErr(); err != nil {
		s.concern(fmt.Sprintf("recording the model exchanges stopped (%v); the run went on without it", err))
	}
}
