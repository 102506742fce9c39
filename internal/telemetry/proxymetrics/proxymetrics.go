// Package proxymetrics adapts the proxy's Observer hooks to Atrium's
// Prometheus metrics. It is a package of its own so that telemetry stays
// below proxy (proxy may use telemetry's request id) without an import
// cycle.
package proxymetrics

import (
	"time"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
)

// Observer records proxy events in telemetry.ProxyMetrics. Safe for
// concurrent use; every method is a few atomic adds.
type Observer struct {
	m *telemetry.ProxyMetrics
}

var _ proxy.Observer = (*Observer)(nil)

// New returns an Observer recording into m.
func New(m *telemetry.ProxyMetrics) *Observer { return &Observer{m: m} }

// ConnectionOpened counts an accepted client connection.
func (o *Observer) ConnectionOpened() {
	o.m.SessionsTotal.Inc()
	o.m.SessionsActive.Inc()
}

// SessionStarted counts a session the upstream authenticated.
func (o *Observer) SessionStarted() { o.m.SessionsAuthenticated.Inc() }

// UpstreamConnected records how long connecting to the upstream took; failed
// attempts show in atrium_sessions_ended_total{reason="upstream_dial"}.
func (o *Observer) UpstreamConnected(d time.Duration, err error) {
	if err == nil {
		o.m.UpstreamConnectSeconds.Observe(d.Seconds())
	}
}

// ConnectionClosed records why a connection ended. Its traffic is not added
// here: the relayed-traffic counters read the server's running totals at
// scrape time (see Traffic), which already include it.
func (o *Observer) ConnectionClosed(s proxy.ConnStats) {
	o.m.SessionsActive.Dec()
	o.m.SessionsEnded.WithLabelValues(s.Reason.String()).Inc()
}

// Intercepted records a statement the proxy answered itself.
func (o *Observer) Intercepted(kind string, d time.Duration, err error) {
	if kind == "" {
		kind = "other"
	}
	o.m.Intercepted.WithLabelValues(kind).Inc()
	o.m.InterceptSeconds.WithLabelValues(kind).Observe(d.Seconds())
	if err != nil {
		o.m.InterceptErrors.WithLabelValues(kind, SQLStateClass(err)).Inc()
	}
}

// TrafficSource is what Traffic reads (*proxy.Server).
type TrafficSource interface {
	Traffic() proxy.Traffic
}

// Traffic makes the relayed bytes and messages counters read src's running
// totals at every scrape.
func Traffic(m *telemetry.ProxyMetrics, src TrafficSource) {
	m.SetTrafficSource(func() telemetry.RelayTotals {
		t := src.Traffic()
		return telemetry.RelayTotals{
			BytesClientToServer: t.BytesIn, MessagesClientToServer: t.MessagesIn,
			BytesServerToClient: t.BytesOut, MessagesServerToClient: t.MessagesOut,
		}
	})
}

// SQLStateClass is the class (first two characters) of the SQLSTATE the
// client saw for err (see proxy.SQLState).
func SQLStateClass(err error) string {
	code := proxy.SQLState(err)
	if len(code) < 2 {
		return "58"
	}
	return code[:2]
}
