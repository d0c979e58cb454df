package x11

import (
	"context"
	"time"
)

// TypingPause is how long PressKey lets pass after the application has
// read the characters TypeText typed before it presses a key. Toolkits act
// on a name typed into a field only after the typing stops: GTK's file
// chooser (GTK 3 and 4) unselects the file list 150 ms after the name
// last changed, and a Return that arrives before then leaves the dialog
// open. A person always pauses that long between the last letter of a
// name and Return; measured on mousepad's Save As dialog, Return sent
// 130 ms after the name was dropped every time and 150 ms after saved.
const TypingPause = 250 * time.Millisecond

// pingTimeout bounds how long markTyped waits for the focused application
// to answer its ping: an application that is busy for longer gets the
// pause counted from the moment the keys were sent.
const pingTimeout = time.Second

// markTyped records when the keys TypeText just sent were read by the
// application that has the focus, for PressKey to pause after. Callers
// hold inputMu and have synced, so the server has delivered the keys.
func (c *Conn) markTyped(ctx context.Context) {
	c.typedAt = time.Now()
	if c.pingFocused(ctx) {
		c.typedAt = time.Now()
	}
}

// pingFocused asks the application that has the focus to answer a ping,
// within pingTimeout, and reports whether it did. The application answers
// from its main loop, reading its events in the order the server queued
// them, so the answer proves it has read every key sent before the ping.
func (c *Conn) pingFocused(ctx context.Context) bool {
	id, err := c.focusedClient()
	if err != nil || id == 0 {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return c.Ping(pctx, uint32(id)) == nil
}

// pauseAfterTyping waits until TypingPause has passed since the keys
// TypeText typed last were read, then pings the application once more.
// By then the toolkit's own timer (GTK's 150 ms) is due, and a main loop
// dispatches every due source of a priority in one iteration: the answer
// to this ping comes from the iteration that also ran the timer, however
// a loaded machine delays it, so the key sent next finds it done. Callers
// hold inputMu.
func (c *Conn) pauseAfterTyping(ctx context.Context) error {
	if c.typedAt.IsZero() {
		return nil
	}
	wait := time.Until(c.typedAt.Add(TypingPause))
	c.typedAt = time.Time{}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	c.pingFocused(ctx)
	return ctx.Err()
}
