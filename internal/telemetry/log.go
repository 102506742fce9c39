package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// Log formats accepted by NewLogger.
const (
	LogFormatAuto = "auto" // text on a terminal, JSON otherwise
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// NewLogger builds the process logger writing to w. format is auto, text or
// json: auto picks text when w is a terminal (a person is reading) and JSON
// otherwise (a collector is). level is debug, info, warn or error. Every
// record logged with a context that carries a request id gets a request_id
// attribute.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	var lv slog.LevelVar
	lv.Set(lvl)
	return NewLoggerLevel(w, format, &lv)
}

// NewLoggerLevel is NewLogger with the level in lv, which the caller may
// change while the logger is in use (SIGHUP reload of --log-level).
func NewLoggerLevel(w io.Writer, format string, lv *slog.LevelVar) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "", LogFormatAuto:
		if IsTerminal(w) {
			h = slog.NewTextHandler(w, opts)
		} else {
			h = slog.NewJSONHandler(w, opts)
		}
	case LogFormatText:
		h = slog.NewTextHandler(w, opts)
	case LogFormatJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want auto, text or json", format)
	}
	return slog.New(ContextHandler{Handler: h}), nil
}

// ParseLevel parses debug, info, warn (warning) or error, case-insensitively.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
}

// IsTerminal reports whether w is a character device (a terminal), the
// portable check that needs no terminal library.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// requestIDKey is the context key of the request id.
type requestIDKey struct{}

// RequestIDKey is the log attribute name of the request id.
const RequestIDKey = "request_id"

// NewRequestID returns a fresh random request id: 16 hex characters, short
// enough to read in logs and unique enough to find one question's lines
// across instances.
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// WithRequestID returns ctx carrying id. The proxy sets it when a question
// arrives; every stage below logs with that context.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// EnsureRequestID returns ctx with a request id, minting one when ctx has
// none, and the id.
func EnsureRequestID(ctx context.Context) (context.Context, string) {
	if id := RequestID(ctx); id != "" {
		return ctx, id
	}
	id := NewRequestID()
	return WithRequestID(ctx, id), id
}

// RequestIDAttr is the log attribute for id.
func RequestIDAttr(id string) slog.Attr { return slog.String(RequestIDKey, id) }

// ContextHandler adds the request id from the record's context to every
// record, so code deep in a stage logs with logger.InfoContext(ctx, ...)
// and the line still names its question.
type ContextHandler struct {
	slog.Handler
}

// Handle adds request_id when ctx carries one.
func (h ContextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(RequestIDAttr(id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the request-id behaviour on derived handlers.
func (h ContextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return ContextHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the request-id behaviour on derived handlers.
func (h ContextHandler) WithGroup(name string) slog.Handler {
	return ContextHandler{h.Handler.WithGroup(name)}
}
