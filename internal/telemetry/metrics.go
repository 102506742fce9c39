// Package telemetry holds Atrium's operational plumbing shared by every
// component: Prometheus metrics (one struct per component, built from an
// injected prometheus.Registerer), the admin HTTP server (/metrics, /healthz,
// /readyz), the slog set-up and the per-question request id.
//
// Metric names follow Prometheus conventions: the atrium_ namespace,
// counters end in _total, durations are histograms in seconds ending in
// _seconds, and labels are few and of bounded cardinality (never a
// question, a table name or a role).
package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "atrium"

// registerer returns reg, or a private registry when reg is nil, so a
// component built without metrics still has working (unexported) ones.
func registerer(reg prometheus.Registerer) prometheus.Registerer {
	if reg == nil {
		return prometheus.NewRegistry()
	}
	return reg
}

// Buckets for the latencies Atrium measures: from sub-millisecond (cache
// hits, retrieval on small catalogs) to tens of seconds (LLM calls).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics gathers every component's metrics on one registerer. Build it
// once per process and hand each component its part.
type Metrics struct {
	Proxy     *ProxyMetrics
	Retrieval *RetrievalMetrics
	LLM       *LLMMetrics
	Catalog   *CatalogMetrics
	QueryLog  *QueryLogMetrics
}

// NewMetrics registers all of Atrium's metrics on reg (nil: a private
// registry). It panics if they are already registered there, as
// prometheus.MustRegister does: that is a programming error.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	reg = registerer(reg)
	return &Metrics{
		Proxy:     NewProxyMetrics(reg),
		Retrieval: NewRetrievalMetrics(reg),
		LLM:       NewLLMMetrics(reg),
		Catalog:   NewCatalogMetrics(reg),
		QueryLog:  NewQueryLogMetrics(reg),
	}
}

// ProxyMetrics covers client sessions and the relay.
type ProxyMetrics struct {
	// SessionsActive is the number of client sessions open now.
	SessionsActive prometheus.Gauge
	// SessionsTotal counts sessions accepted since start.
	SessionsTotal prometheus.Counter
	// SessionsAuthenticated counts sessions the upstream authenticated.
	SessionsAuthenticated prometheus.Counter
	// SessionsEnded counts finished sessions by why they ended (normal,
	// client_error, upstream_error, timeout, shutdown, rejected...).
	SessionsEnded *prometheus.CounterVec
	// traffic exports atrium_relayed_bytes_total and
	// atrium_relayed_messages_total (by direction: client_to_server,
	// server_to_client) from the source SetTrafficSource installs, read at
	// scrape time so long sessions' traffic shows while they run.
	traffic *trafficCollector
	// Intercepted counts statements the proxy answered itself, by kind
	// (nl, nl_sql, retrieve, version...).
	Intercepted *prometheus.CounterVec
	// InterceptSeconds is how long answering an intercepted statement
	// took, by kind.
	InterceptSeconds *prometheus.HistogramVec
	// InterceptErrors counts intercepted statements answered with an
	// error, by kind and SQLSTATE class.
	InterceptErrors *prometheus.CounterVec
	// UpstreamConnectSeconds is the time to open a session's connection to
	// the upstream server (TCP and TLS; authentication is the client's).
	UpstreamConnectSeconds prometheus.Histogram
}

// Directions of relayed traffic, the values of the direction label.
const (
	ClientToServer = "client_to_server"
	ServerToClient = "server_to_client"
)

// NewProxyMetrics registers the proxy's metrics on reg (nil: private).
func NewProxyMetrics(reg prometheus.Registerer) *ProxyMetrics {
	reg = registerer(reg)
	m := &ProxyMetrics{
		SessionsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "sessions_active",
			Help: "Client sessions open now.",
		}),
		SessionsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "sessions_total",
			Help: "Client sessions accepted since start.",
		}),
		SessionsAuthenticated: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "sessions_authenticated_total",
			Help: "Client sessions the upstream server authenticated.",
		}),
		SessionsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "sessions_ended_total",
			Help: "Client sessions ended, by reason.",
		}, []string{"reason"}),
		traffic: &trafficCollector{
			bytes: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "relayed_bytes_total"),
				"Bytes relayed between clients and the upstream server, by direction.", []string{"direction"}, nil),
			msgs: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "relayed_messages_total"),
				"Protocol messages relayed between clients and the upstream server, by direction.", []string{"direction"}, nil),
		},
		Intercepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "queries_intercepted_total",
			Help: "Statements Atrium answered itself instead of relaying, by kind.",
		}, []string{"kind"}),
		InterceptSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "intercept_seconds",
			Help:    "Time to answer a statement Atrium intercepted, by kind.",
			Buckets: latencyBuckets,
		}, []string{"kind"}),
		InterceptErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "intercept_errors_total",
			Help: "Intercepted statements answered with an error, by kind and SQLSTATE class.",
		}, []string{"kind", "sqlstate_class"}),
		UpstreamConnectSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "upstream_connect_seconds",
			Help:    "Time to open a session's connection to the upstream server (TCP and TLS).",
			Buckets: latencyBuckets,
		}),
	}
	reg.MustRegister(m.SessionsActive, m.SessionsTotal, m.SessionsAuthenticated, m.SessionsEnded, m.traffic,
		m.Intercepted, m.InterceptSeconds, m.InterceptErrors, m.UpstreamConnectSeconds)
	return m
}

// RelayTotals are relayed traffic totals since start, by direction; they
// never decrease.
type RelayTotals struct {
	BytesClientToServer, MessagesClientToServer uint64
	BytesServerToClient, MessagesServerToClient uint64
}

// SetTrafficSource installs the function each scrape reads the relayed
// traffic counters from (the proxy server's running totals). Until it is
// called the counters read 0. Safe for concurrent use.
func (m *ProxyMetrics) SetTrafficSource(f func() RelayTotals) { m.traffic.src.Store(&f) }

// trafficCollector exports counters kept by the proxy itself: the relay
// adds to per-connection atomics, and the totals become metrics only when
// Prometheus asks, which keeps metric bookkeeping off the hot relay path.
type trafficCollector struct {
	bytes, msgs *prometheus.Desc
	src         atomic.Pointer[func() RelayTotals]
}

func (c *trafficCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.bytes
	ch <- c.msgs
}

func (c *trafficCollector) Collect(ch chan<- prometheus.Metric) {
	var t RelayTotals
	if f := c.src.Load(); f != nil {
		t = (*f)()
	}
	for _, v := range []struct {
		d   *prometheus.Desc
		n   uint64
		dir string
	}{
		{c.bytes, t.BytesClientToServer, ClientToServer}, {c.bytes, t.BytesServerToClient, ServerToClient},
		{c.msgs, t.MessagesClientToServer, ClientToServer}, {c.msgs, t.MessagesServerToClient, ServerToClient},
	} {
		ch <- prometheus.MustNewConstMetric(v.d, prometheus.CounterValue, float64(v.n), v.dir)
	}
}

// RetrievalMetrics covers table retrieval (RETRIEVE and the first stage of
// every question). The NL pipeline's own stages (LLM, validation,
// execution) are sqlgen's atrium_nl_* metrics, and the result cache's are
// resultcache's atrium_cache_* metrics; they register on the same registry.
type RetrievalMetrics struct {
	// Retrievals counts retrievals by status (ok, empty, error).
	Retrievals *prometheus.CounterVec
	// StageSeconds is each retrieval stage's latency, by stage
	// (candidates, rerank, expand, multihop, total).
	StageSeconds *prometheus.HistogramVec
	// TablesChosen is how many tables a retrieval chose.
	TablesChosen prometheus.Histogram
}

// Retrieval stage names used as the stage label.
const (
	StageCandidates = "candidates"
	StageRerank     = "rerank"
	StageExpand     = "expand"
	StageMultihop   = "multihop"
	StageTotal      = "total"
)

// NewRetrievalMetrics registers the retriever's metrics on reg (nil: private).
func NewRetrievalMetrics(reg prometheus.Registerer) *RetrievalMetrics {
	reg = registerer(reg)
	m := &RetrievalMetrics{
		Retrievals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "retrievals_total",
			Help: "Table retrievals (RETRIEVE and questions), by status (ok, empty, error).",
		}, []string{"status"}),
		StageSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "retrieval_stage_seconds",
			Help:    "Latency of each retrieval stage (candidates, rerank, expand, multihop, total).",
			Buckets: latencyBuckets,
		}, []string{"stage"}),
		TablesChosen: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "retrieval_tables_chosen",
			Help:    "Tables chosen per retrieval.",
			Buckets: []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50},
		}),
	}
	reg.MustRegister(m.Retrievals, m.StageSeconds, m.TablesChosen)
	return m
}

// ObserveRetrieval records one retrieval: its stage durations, the number of
// tables chosen, and whether it failed.
func (m *RetrievalMetrics) ObserveRetrieval(stages map[string]time.Duration, tables int, err error) {
	for stage, d := range stages {
		m.StageSeconds.WithLabelValues(stage).Observe(d.Seconds())
	}
	switch {
	case err != nil:
		m.Retrievals.WithLabelValues("error").Inc()
		return
	case tables == 0:
		m.Retrievals.WithLabelValues("empty").Inc()
	default:
		m.Retrievals.WithLabelValues("ok").Inc()
	}
	m.TablesChosen.Observe(float64(tables))
}

// LLMMetrics covers calls to the OpenAI-compatible endpoint, for clients
// that report them (the catalog's description writer, the SQL generator).
type LLMMetrics struct {
	// Calls counts requests by purpose (generate, repair, describe,
	// rewrite, embed) and outcome (ok, error).
	Calls *prometheus.CounterVec
	// Errors counts failed requests by reason (timeout, http_429,
	// http_5xx, http_4xx, transport, decode).
	Errors *prometheus.CounterVec
	// CallSeconds is each request's latency, retries included.
	CallSeconds *prometheus.HistogramVec
	// Retries counts retried requests (429/5xx with backoff).
	Retries prometheus.Counter
}

// NewLLMMetrics registers the LLM client's metrics on reg (nil: private).
func NewLLMMetrics(reg prometheus.Registerer) *LLMMetrics {
	reg = registerer(reg)
	m := &LLMMetrics{
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_calls_total",
			Help: "Requests to the LLM endpoint, by purpose and outcome.",
		}, []string{"purpose", "outcome"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_errors_total",
			Help: "Failed LLM requests, by reason.",
		}, []string{"reason"}),
		CallSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "llm_call_seconds",
			Help:    "Latency of LLM requests including retries, by purpose.",
			Buckets: latencyBuckets,
		}, []string{"purpose"}),
		Retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "llm_retries_total",
			Help: "LLM requests retried after a 429 or 5xx response.",
		}),
	}
	reg.MustRegister(m.Calls, m.Errors, m.CallSeconds, m.Retries)
	return m
}

// ObserveCall records one LLM request. errReason is "" on success. Tokens
// are counted by sqlgen (atrium_nl_llm_tokens_total).
func (m *LLMMetrics) ObserveCall(purpose string, d time.Duration, errReason string) {
	outcome := "ok"
	if errReason != "" {
		outcome = "error"
		m.Errors.WithLabelValues(errReason).Inc()
	}
	m.Calls.WithLabelValues(purpose, outcome).Inc()
	m.CallSeconds.WithLabelValues(purpose).Observe(d.Seconds())
}

// Cache tiers, as the query log records them.
const (
	TierResult = "result"
	TierSQL    = "sql"
)

// CatalogMetrics covers the catalog: its version and the syncs that
// change it.
type CatalogMetrics struct {
	// Version is the catalog version this instance last saw.
	Version prometheus.Gauge
	// Tables is the number of tables in the catalog.
	Tables prometheus.Gauge
	// SyncSeconds is the duration of catalog syncs, by trigger (manual,
	// watch, periodic, startup).
	SyncSeconds *prometheus.HistogramVec
	// Syncs counts syncs by trigger and outcome (ok, error).
	Syncs *prometheus.CounterVec
	// TablesSynced counts tables rebuilt by syncs (unchanged ones are not
	// counted).
	TablesSynced prometheus.Counter
	// LastSync is the Unix time of the last successful sync.
	LastSync prometheus.Gauge
}

// NewCatalogMetrics registers the catalog's metrics on reg (nil: private).
func NewCatalogMetrics(reg prometheus.Registerer) *CatalogMetrics {
	reg = registerer(reg)
	m := &CatalogMetrics{
		Version: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "catalog_version",
			Help: "Catalog version this instance last saw (changes whenever the catalog changes).",
		}),
		Tables: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "catalog_tables",
			Help: "Tables in the catalog.",
		}),
		SyncSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "catalog_sync_seconds",
			Help:    "Duration of catalog syncs, by trigger.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"trigger"}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "catalog_syncs_total",
			Help: "Catalog syncs, by trigger and outcome.",
		}, []string{"trigger", "outcome"}),
		TablesSynced: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "catalog_tables_synced_total",
			Help: "Tables rebuilt by catalog syncs.",
		}),
		LastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "catalog_last_sync_timestamp_seconds",
			Help: "Unix time of the last successful catalog sync.",
		}),
	}
	reg.MustRegister(m.Version, m.Tables, m.SyncSeconds, m.Syncs, m.TablesSynced, m.LastSync)
	return m
}

// ObserveSync records one catalog sync.
func (m *CatalogMetrics) ObserveSync(trigger string, d time.Duration, tablesRebuilt int, err error, now time.Time) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	} else {
		m.LastSync.Set(float64(now.Unix()))
	}
	m.Syncs.WithLabelValues(trigger, outcome).Inc()
	m.SyncSeconds.WithLabelValues(trigger).Observe(d.Seconds())
	m.TablesSynced.Add(float64(tablesRebuilt))
}

// QueryLogMetrics covers the asynchronous query-log writer.
type QueryLogMetrics struct {
	// Written counts entries stored in atrium.query_log.
	Written prometheus.Counter
	// Dropped counts entries not stored, by reason (queue_full: the
	// catalog database is slower than the questions; write_error;
	// closed: logged after shutdown began; invalid: an entry the table
	// would reject).
	Dropped *prometheus.CounterVec
	// QueueLength is the number of entries waiting to be written.
	QueueLength prometheus.Gauge
	// FlushSeconds is the duration of each batch write.
	FlushSeconds prometheus.Histogram
	// Purged counts entries deleted by retention.
	Purged prometheus.Counter
}

// Reasons an entry was dropped, the values of the reason label.
const (
	DropQueueFull  = "queue_full"
	DropWriteError = "write_error"
	DropClosed     = "closed"
	DropInvalid    = "invalid"
)

// NewQueryLogMetrics registers the query log's metrics on reg (nil: private).
func NewQueryLogMetrics(reg prometheus.Registerer) *QueryLogMetrics {
	reg = registerer(reg)
	m := &QueryLogMetrics{
		Written: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "query_log_written_total",
			Help: "Entries written to atrium.query_log.",
		}),
		Dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "query_log_dropped_total",
			Help: "Query-log entries dropped instead of slowing queries, by reason.",
		}, []string{"reason"}),
		QueueLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "query_log_queue_length",
			Help: "Query-log entries waiting to be written.",
		}),
		FlushSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "query_log_flush_seconds",
			Help:    "Duration of query-log batch writes.",
			Buckets: latencyBuckets,
		}),
		Purged: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "query_log_purged_total",
			Help: "Query-log entries deleted by retention.",
		}),
	}
	reg.MustRegister(m.Written, m.Dropped, m.QueueLength, m.FlushSeconds, m.Purged)
	for _, r := range []string{DropQueueFull, DropWriteError, DropClosed} {
		m.Dropped.WithLabelValues(r)
	}
	return m
}
