package proxymetrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/internal/telemetry"
	"github.com/atriumdb/atrium/proxy"
)

func TestObserver(t *testing.T) {
	m := telemetry.NewProxyMetrics(prometheus.NewRegistry())
	o := New(m)

	o.ConnectionOpened()
	o.ConnectionOpened()
	o.SessionStarted()
	require.Equal(t, 2.0, testutil.ToFloat64(m.SessionsActive))
	o.ConnectionClosed(proxy.ConnStats{Reason: proxy.EndClientClosed, Authenticated: true,
		BytesIn: 100, BytesOut: 2000, MessagesIn: 3, MessagesOut: 9})
	o.ConnectionClosed(proxy.ConnStats{Reason: proxy.EndRefused})

	require.Equal(t, 0.0, testutil.ToFloat64(m.SessionsActive))
	require.Equal(t, 2.0, testutil.ToFloat64(m.SessionsTotal))
	require.Equal(t, 1.0, testutil.ToFloat64(m.SessionsAuthenticated))
	require.Equal(t, 1.0, testutil.ToFloat64(m.SessionsEnded.WithLabelValues("client_closed")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.SessionsEnded.WithLabelValues("refused")))
	o.UpstreamConnected(3*time.Millisecond, nil)
	o.UpstreamConnected(time.Second, errors.New("refused"))
	require.Equal(t, 1, testutil.CollectAndCount(m.UpstreamConnectSeconds))

	o.Intercepted("nl", 30*time.Millisecond, nil)
	o.Intercepted("nl", time.Second, proxy.Errorf("42501", "permission denied"))
	o.Intercepted("", time.Millisecond, context.Canceled)
	require.Equal(t, 2.0, testutil.ToFloat64(m.Intercepted.WithLabelValues("nl")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.InterceptErrors.WithLabelValues("nl", "42")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.InterceptErrors.WithLabelValues("other", "57")))
}

type fixedTraffic struct{ t proxy.Traffic }

func (f *fixedTraffic) Traffic() proxy.Traffic { return f.t }

func TestTrafficReadAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := telemetry.NewProxyMetrics(reg)
	const names = "atrium_relayed_bytes_total"
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP atrium_relayed_bytes_total Bytes relayed between clients and the upstream server, by direction.
# TYPE atrium_relayed_bytes_total counter
atrium_relayed_bytes_total{direction="client_to_server"} 0
atrium_relayed_bytes_total{direction="server_to_client"} 0
`), names))
	src := &fixedTraffic{t: proxy.Traffic{BytesIn: 100, MessagesIn: 3, BytesOut: 2000, MessagesOut: 9}}
	Traffic(m, src)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP atrium_relayed_messages_total Protocol messages relayed between clients and the upstream server, by direction.
# TYPE atrium_relayed_messages_total counter
atrium_relayed_messages_total{direction="client_to_server"} 3
atrium_relayed_messages_total{direction="server_to_client"} 9
`), "atrium_relayed_messages_total"))
	src.t.BytesOut = 5000 // a session still running relays more
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP atrium_relayed_bytes_total Bytes relayed between clients and the upstream server, by direction.
# TYPE atrium_relayed_bytes_total counter
atrium_relayed_bytes_total{direction="client_to_server"} 100
atrium_relayed_bytes_total{direction="server_to_client"} 5000
`), names))
}

func TestSQLStateClass(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{proxy.Errorf("42601", "syntax"), "42"},
		{fmt.Errorf("wrapped: %w", &proxy.UpstreamError{Code: "40001"}), "40"},
		{context.DeadlineExceeded, "57"},
		{errors.New("internal"), "58"},
		{&proxy.Error{Code: ""}, "58"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, SQLStateClass(tt.err), "%v", tt.err)
	}
}
